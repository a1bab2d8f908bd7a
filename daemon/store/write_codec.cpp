#include "daemon/store/write_codec.hpp"

#include <array>
#include <nlohmann/json.hpp>

#include "daemon/store/sqlite.hpp"

namespace nlohmann {
template <typename T>
struct adl_serializer<std::optional<T>> {
    static void to_json(json& j, const std::optional<T>& v) { j = v ? json(*v) : json(nullptr); }
    static void from_json(const json& j, std::optional<T>& v) {
        v = j.is_null() ? std::nullopt : std::optional<T>(j.get<T>());
    }
};
}  // namespace nlohmann

namespace coloc::daemon {

NLOHMANN_JSON_SERIALIZE_ENUM(JobState,
                             {{JobState::Placed, "placed"}, {JobState::Running, "running"}, {JobState::Ended, "ended"}})
// With defaults: a journal an older colocd wrote holds jobs without the later fields.
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(JobRow, job_id, uid, user, job_name, partition, profile, first_seen,
                                                start, end, exit_status, elapsed_s, state, end_reason, submitted,
                                                time_limit_s)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(PlacementRow, decision, job_id, node, mode, gpus, predicted_slowdown, source,
                                   created, ended, alternatives)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(ColocationRow, job_a, job_b, node, sharing, start, end)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(PlacementWrite, job, placement, opened)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(StartedWrite, job_id, time)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(EndedWrite, job_id, node, time, exit_status, elapsed_s, job_done)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(ClosedWrite, job_id, node, time, exit_status, job_done, reason)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(ParamsWrite, name, json, time)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(ObservationWrite, job_id, time, iter_time_s, neighbours_json, model_name,
                                   params_json)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(AdviceWrite, decision, job_id, node, advice)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(SoloRunWrite, key, learned, job_id, time, iter_time_s, runtime_s)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(MovedWrite, job_id, node, gpus)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(TimesWrite, job_id, submitted, time_limit_s)

namespace {

// The kinds, in StoreWrite's order; a name, not an index, so that adding a kind breaks nothing.
constexpr std::array<const char*, std::variant_size_v<StoreWrite>> kKinds = {
    "placement", "started", "ended", "closed", "params", "observation", "advice", "solo_run", "moved", "times"};

template <std::size_t I = 0>
StoreWrite decode_kind(std::string_view kind, const nlohmann::json& fields) {
    if constexpr (I == std::variant_size_v<StoreWrite>) {
        throw StoreError("'" + std::string(kind) + "' is no kind of history write");
    } else {
        if (kind == kKinds[I]) return fields.get<std::variant_alternative_t<I, StoreWrite>>();
        return decode_kind<I + 1>(kind, fields);
    }
}

}  // namespace

std::string encode_write(const StoreWrite& write) {
    nlohmann::json fields;
    std::visit([&](const auto& w) { fields = w; }, write);
    return nlohmann::json{{"kind", kKinds[write.index()]}, {"write", std::move(fields)}}.dump();
}

StoreWrite decode_write(std::string_view text) {
    try {
        const auto j = nlohmann::json::parse(text);
        return decode_kind(j.at("kind").get<std::string>(), j.at("write"));
    } catch (const nlohmann::json::exception& e) {
        throw StoreError(std::string("unreadable history write: ") + e.what());
    }
}

}  // namespace coloc::daemon
