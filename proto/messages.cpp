#include "proto/messages.hpp"

#include <charconv>

#include "proto/errors.hpp"
#include "proto/fields.hpp"

namespace coloc::proto {

namespace {
constexpr std::int64_t kMaxTime = 1LL << 40;
const std::vector<std::string> kModes = {mode_name(GpuMode::Bind), mode_name(GpuMode::Narrow),
                                         mode_name(GpuMode::Observe)};
const std::vector<std::string> kModesOrAuto = {kAutoMode, kModes[0], kModes[1], kModes[2]};
}  // namespace

json PlaceRequest::to_json() const {
    json j = {
        {"op", op_name(Op::Place)}, {"job_id", job_id}, {"node", node}, {"mode", mode_name(mode)}, {"slots", slots}};
    if (job_uid >= 0) j["job_uid"] = job_uid;
    if (!partition.empty()) j["partition"] = partition;
    if (!job_name.empty()) j["job_name"] = job_name;
    if (!profile.empty()) j["profile"] = profile;
    if (!slurm_gpus.empty()) j["slurm_gpus"] = slurm_gpus;
    if (!slots_gres.empty()) j["slots_gres"] = slots_gres;
    if (!job_nodes.empty()) j["job_nodes"] = job_nodes;
    if (!unreported.empty()) {
        json list = json::array();
        for (const auto& u : unreported) {
            json e = {{"job_id", u.job_id}, {"gpus", u.gpus}, {"since", u.since}};
            if (u.ended > 0) {
                e["ended"] = u.ended;
                e["exit_status"] = u.exit_status;
                e["elapsed_s"] = u.elapsed_s;
            }
            list.push_back(e);
        }
        j["unreported"] = list;
    }
    return j;
}

PlaceRequest PlaceRequest::from_json(const json& body) {
    PlaceRequest r;
    r.job_id = get_int(body, "job_id", 1, kMaxJobId);
    r.job_uid = get_int_or(body, "job_uid", -1, -1, 0xFFFFFFFELL);
    r.node = get_string(body, "node", 64);
    if (r.node.empty()) throw ProtoError(code::kBadField, "field 'node': empty");
    r.partition = get_string_or(body, "partition", "", 64);
    r.job_name = get_string_or(body, "job_name", "");
    r.profile = get_string_or(body, "profile", "", 64);
    r.mode = parse_mode(get_enum_or(body, "mode", kModesOrAuto, kAutoMode));
    r.slots = static_cast<int>(get_int_or(body, "slots", 0, 0, base::kMaxGpuIndex + 1));
    r.slurm_gpus = get_int_list_or(body, "slurm_gpus", 0, base::kMaxGpuIndex, 64);
    r.slots_gres = get_string_or(body, "slots_gres", "", 64);
    r.job_nodes = get_string_list_or(body, "job_nodes", 4096);
    auto it = body.find("unreported");
    if (it != body.end() && !it->is_null()) {
        if (!it->is_array() || it->size() > 64)
            throw ProtoError(code::kBadField, "field 'unreported': expected a list of at most 64 entries");
        for (std::size_t i = 0; i < it->size(); ++i) {
            const json& e = (*it)[i];
            LocalPlacement u;
            try {
                u.job_id = get_int(e, "job_id", 1, kMaxJobId);
                u.gpus = get_int_list_or(e, "gpus", 0, base::kMaxGpuIndex, 64);
                u.since = get_int_or(e, "since", 0, 0, kMaxTime);
                u.ended = get_int_or(e, "ended", 0, 0, kMaxTime);
                u.exit_status = static_cast<int>(get_int_or(e, "exit_status", 0, INT32_MIN, INT32_MAX));
                u.elapsed_s = get_number_or(e, "elapsed_s", 0, 0, 1e9);
            } catch (const ProtoError& err) {
                // Name the entry: "field 'unreported[2].job_id': ...".
                std::string what = err.what();
                if (what.rfind("field '", 0) == 0) what.insert(7, "unreported[" + std::to_string(i) + "].");
                throw ProtoError(err.code(), what);
            }
            r.unreported.push_back(std::move(u));
        }
    }
    return r;
}

json PlaceReply::to_json() const {
    json j = {{"decision", decision},
              {"mode", mode_name(mode)},
              {"gpus", gpus},
              {"predicted_slowdown", predicted_slowdown},
              {"reused", reused}};
    if (!durability.empty()) j[kDurability] = durability;
    if (slots >= 0) j["slots"] = slots;
    if (phase_offset_s && phase_period_s) {
        j["phase_offset_s"] = *phase_offset_s;
        j["phase_period_s"] = *phase_period_s;
    }
    if (profile_unknown) j["profile_unknown"] = true;
    return j;
}

PlaceReply PlaceReply::from_json(const json& reply) {
    PlaceReply r;
    r.decision = get_int(reply, "decision", 0, INT64_MAX);
    r.mode = parse_mode(get_enum_or(reply, "mode", kModes, mode_name(GpuMode::Narrow))).value_or(GpuMode::Narrow);
    r.gpus = get_int_list_or(reply, "gpus", 0, base::kMaxGpuIndex, 64);
    r.predicted_slowdown = get_number_or(reply, "predicted_slowdown", 1.0, 0.0, 1e6);
    r.reused = get_bool_or(reply, "reused", false);
    r.durability = get_enum_or(reply, kDurability, {kStored, kQueued}, "");
    r.slots = static_cast<int>(get_int_or(reply, "slots", -1, -1, base::kMaxGpuIndex + 1));
    if (reply.contains("phase_period_s")) {
        r.phase_period_s = get_number_or(reply, "phase_period_s", 0.0, 0.0, 3600.0);
        r.phase_offset_s = get_number_or(reply, "phase_offset_s", 0.0, 0.0, 3600.0);
    }
    r.profile_unknown = get_bool_or(reply, "profile_unknown", false);
    return r;
}

json StartedReport::to_json() const {
    json j = {{"op", op_name(Op::Started)}, {"job_id", job_id}, {"node", node},
              {"decision", decision},       {"gpus", gpus},     {"time", time}};
    if (job_uid >= 0) j["job_uid"] = job_uid;
    return j;
}

StartedReport StartedReport::from_json(const json& body) {
    StartedReport r;
    r.job_id = get_int(body, "job_id", 1, kMaxJobId);
    r.job_uid = get_int_or(body, "job_uid", -1, -1, 0xFFFFFFFELL);
    r.node = get_string(body, "node", 64);
    r.decision = get_int_or(body, "decision", 0, 0, INT64_MAX);
    r.gpus = get_int_list_or(body, "gpus", 0, base::kMaxGpuIndex, 64);
    r.time = get_int_or(body, "time", 0, 0, kMaxTime);
    return r;
}

json EndedReport::to_json() const {
    return {{"op", op_name(Op::Ended)},   {"job_id", job_id},       {"node", node},
            {"exit_status", exit_status}, {"elapsed_s", elapsed_s}, {"time", time}};
}

EndedReport EndedReport::from_json(const json& body) {
    EndedReport r;
    r.job_id = get_int(body, "job_id", 1, kMaxJobId);
    r.node = get_string(body, "node", 64);
    r.exit_status = static_cast<int>(get_int_or(body, "exit_status", 0, INT32_MIN, INT32_MAX));
    r.elapsed_s = get_number_or(body, "elapsed_s", 0, 0, 1e9);
    r.time = get_int_or(body, "time", 0, 0, kMaxTime);
    return r;
}

std::string gpu_list(const std::vector<int>& gpus) {
    std::string s;
    for (int g : gpus) s += (s.empty() ? "" : ",") + std::to_string(g);
    return s;
}

std::vector<int> parse_gpu_list(const std::string& text) {
    std::vector<int> out;
    if (text.empty()) return out;
    const char* p = text.data();
    const char* end = p + text.size();
    while (p < end) {
        int v = -1;
        auto [next, ec] = std::from_chars(p, end, v);
        if (ec != std::errc() || v < 0 || v > base::kMaxGpuIndex)
            throw ProtoError(code::kBadField, "GPU list '" + text + "' is not a comma-separated list of GPU indices");
        out.push_back(v);
        p = next;
        if (p < end) {
            if (*p != ',' || p + 1 == end)
                throw ProtoError(code::kBadField, "GPU list '" + text + "' has an unexpected character");
            ++p;
        }
    }
    return out;
}

}  // namespace coloc::proto
