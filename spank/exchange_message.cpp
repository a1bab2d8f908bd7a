#include "spank/exchange_message.hpp"

#include <utility>

#include "proto/errors.hpp"

namespace coloc::spank {

using json = nlohmann::json;

namespace {

constexpr std::pair<ExchangeError, const char*> kNames[] = {
    {ExchangeError::None, "none"},
    {ExchangeError::NotRunning, "not_running"},
    {ExchangeError::Unavailable, "unavailable"},
    {ExchangeError::BadReply, "bad_reply"},
    {ExchangeError::Refused, "refused"},
    {ExchangeError::Internal, "internal"},
};

}  // namespace

const char* error_name(ExchangeError error) {
    for (const auto& [e, name] : kNames)
        if (e == error) return name;
    return "internal";  // not reached: every error has a name
}

std::string encode(const ExchangeMessage& m) {
    json j = {{"slots", m.slots}, {"skip", m.skip}, {"error", error_name(m.error)}};
    if (!m.slots_why.empty()) j["why"] = m.slots_why;
    if (m.reply) j["reply"] = m.reply->to_json();
    if (!m.code.empty()) j["code"] = m.code;
    if (!m.message.empty()) j["message"] = m.message;
    return j.dump();  // no raw newline: dump escapes those inside strings
}

std::optional<ExchangeMessage> decode(std::string_view line) {
    const json j = json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (!j.is_object()) return std::nullopt;
    try {
        ExchangeMessage m;
        m.slots = j.at("slots").get<int>();
        m.skip = j.at("skip").get<bool>();
        const std::string error = j.at("error").get<std::string>();
        bool known = false;
        for (const auto& [e, name] : kNames) {
            if (error != name) continue;
            m.error = e;
            known = true;
        }
        if (!known) return std::nullopt;
        m.slots_why = j.value("why", "");
        if (j.contains("reply")) m.reply = proto::PlaceReply::from_json(j["reply"]);
        m.code = j.value("code", "");
        m.message = j.value("message", "");
        return m;
    } catch (const json::exception&) {
        return std::nullopt;
    } catch (const proto::ProtoError&) {
        return std::nullopt;
    }
}

}  // namespace coloc::spank
