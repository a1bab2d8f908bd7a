#include "daemon/service/alternatives.hpp"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>

namespace coloc::daemon {

namespace {

// As the JSON library writes numbers: shortest text that reads back the same double, always
// with a fraction or exponent (so that it reads back as a double), null when not finite.
void put_number(std::string& out, double v) {
    if (!std::isfinite(v)) {
        out += "null";
        return;
    }
    char buf[32];
    auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
    out.append(buf, end);
    if (std::memchr(buf, '.', static_cast<std::size_t>(end - buf)) == nullptr &&
        std::memchr(buf, 'e', static_cast<std::size_t>(end - buf)) == nullptr)
        out += ".0";
}

void put_integer(std::string& out, std::int64_t v) {
    char buf[24];
    auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
    out.append(buf, end);
}

// Node names and sharing levels come from colocd.yaml and the model; escaped all the same.
void put_string(std::string& out, std::string_view s) {
    out += '"';
    for (char c : s) {
        if (c == '"' || c == '\\') {
            out += '\\';
            out += c;
        } else if (static_cast<unsigned char>(c) < 0x20) {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(static_cast<unsigned char>(c)));
            out += buf;
        } else {
            out += c;
        }
    }
    out += '"';
}

}  // namespace

void AlternativesWriter::candidate(double job_slowdown, double harm, double loss) {
    candidates_.push_back({job_slowdown, harm, loss, {}, {}});
}

void AlternativesWriter::where(std::string_view node, const std::vector<int>& gpus) {
    std::string& w = candidates_.back().where;
    if (!w.empty()) w += ',';
    w += "{\"node\":";
    put_string(w, node);
    w += ",\"gpus\":[";
    for (std::size_t i = 0; i < gpus.size(); ++i) {
        if (i) w += ',';
        put_integer(w, gpus[i]);
    }
    w += "]}";
}

void AlternativesWriter::neighbour(std::int64_t job_id, const char* shares, double before, double after) {
    std::size_t at = 0;
    while (at < effects_.size() && !(effects_[at].job_id == job_id && std::strcmp(effects_[at].shares, shares) == 0 &&
                                     effects_[at].before == before && effects_[at].after == after))
        ++at;
    if (at == effects_.size()) effects_.push_back({job_id, shares, before, after});
    candidates_.back().neighbours.push_back(at);
}

std::string AlternativesWriter::finish() {
    std::string out;
    out.reserve(64 + 48 * effects_.size() + 128 * candidates_.size());
    out += '{';
    if (!sharing_.empty()) {
        out += "\"sharing\":";
        put_string(out, sharing_);
        out += ',';
    }
    out += "\"effects\":[";
    for (std::size_t i = 0; i < effects_.size(); ++i) {
        const Effect& e = effects_[i];
        out += i ? ",[" : "[";
        put_integer(out, e.job_id);
        out += ',';
        put_string(out, e.shares);
        out += ',';
        put_number(out, e.before);
        out += ',';
        put_number(out, e.after);
        out += ']';
    }
    out += "],\"candidates\":[";
    for (std::size_t i = 0; i < candidates_.size(); ++i) {
        const Pending& c = candidates_[i];
        out += i ? ",{\"where\":[" : "{\"where\":[";
        out += c.where;
        out += "],\"job_slowdown\":";
        put_number(out, c.job_slowdown);
        out += ",\"harm\":";
        put_number(out, c.harm);
        out += ",\"loss\":";
        put_number(out, c.loss);
        out += ",\"neighbours\":[";
        for (std::size_t n = 0; n < c.neighbours.size(); ++n) {
            if (n) out += ',';
            put_integer(out, static_cast<std::int64_t>(c.neighbours[n]));
        }
        out += "]}";
    }
    out += "]}";
    effects_.clear();
    candidates_.clear();
    sharing_.clear();
    return out;
}

std::string explain_sharing(const std::string& stored) {
    proto::json j = proto::json::parse(stored, nullptr, false);
    if (!j.is_object() || !j.contains("sharing") || !j["sharing"].is_string()) return "";
    return j["sharing"].get<std::string>();
}

proto::json explain_candidates(const std::string& stored) {
    using proto::json;
    json j = json::parse(stored, nullptr, false);
    if (j.is_array()) return j;  // the full list, as decisions stored it before
    if (!j.is_object() || !j.contains("effects") || !j.contains("candidates") || !j["effects"].is_array() ||
        !j["candidates"].is_array())
        return json::array();
    const json& effects = j["effects"];
    json out = json::array();
    for (json c : j["candidates"]) {
        json neighbours = json::array();
        if (c.contains("neighbours") && c["neighbours"].is_array())
            for (const json& at : c["neighbours"]) {
                if (!at.is_number_unsigned() || at.get<std::size_t>() >= effects.size()) continue;
                const json& e = effects[at.get<std::size_t>()];
                if (!e.is_array() || e.size() != 4) continue;
                neighbours.push_back({{"job_id", e[0]}, {"shares", e[1]}, {"before", e[2]}, {"after", e[3]}});
            }
        c["neighbours"] = std::move(neighbours);
        out.push_back(std::move(c));
    }
    return out;
}

}  // namespace coloc::daemon
