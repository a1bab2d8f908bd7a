#include <algorithm>
#include <array>
#include <istream>
#include <map>

#include "replay/reader_context.hpp"
#include "replay/readers.hpp"
#include "replay/text.hpp"

namespace coloc::replay {

namespace {

// The keys jobcomp/filetxt writes (Slurm 22.05: src/plugins/jobcomp/filetxt/jobcomp_filetxt.c,
// JOB_FORMAT, plus the optional array and heterogeneous-job keys). Values may contain blanks
// (Name, WorkDir), so a value runs up to the next " Key=" of a known key.
constexpr std::array<const char*, 28> kKeys = {
    "JobId",      "UserId",      "GroupId",  "Name",         "JobState",        "Partition",  "TimeLimit",
    "StartTime",  "EndTime",     "NodeList", "NodeCnt",      "ProcCnt",         "WorkDir",    "ReservationName",
    "Tres",       "Account",     "QOS",      "WcKey",        "Cluster",         "SubmitTime", "EligibleTime",
    "ArrayJobId", "ArrayTaskId", "HetJobId", "HetJobOffset", "DerivedExitCode", "ExitCode",   "BlockId",
};

bool is_key_at(std::string_view line, std::size_t at, std::string_view& key) {
    if (at != 0 && line[at - 1] != ' ') return false;
    for (const char* k : kKeys) {
        std::string_view kv(k);
        if (line.compare(at, kv.size(), kv) == 0 && at + kv.size() < line.size() && line[at + kv.size()] == '=') {
            key = kv;
            return true;
        }
    }
    return false;
}

std::map<std::string_view, std::string_view> split_record(std::string_view line) {
    std::map<std::string_view, std::string_view> out;
    std::string_view key;
    std::size_t value_start = 0;
    bool open = false;
    for (std::size_t i = 0; i < line.size(); ++i) {
        std::string_view k;
        if ((i == 0 || line[i - 1] == ' ') && is_key_at(line, i, k)) {
            if (open) out[key] = trim(line.substr(value_start, i - value_start));
            key = k;
            value_start = i + k.size() + 1;
            open = true;
            i = value_start - 1;
        }
    }
    if (open) out[key] = trim(line.substr(value_start));
    return out;
}

bool no_time(std::string_view s) { return s.empty() || s == "Unknown" || s == "unknown" || s == "None"; }

}  // namespace

void read_jobcomp(std::istream& in, Trace& trace, const ReadOptions& options) {
    ReaderContext ctx(trace, options);
    std::string line;
    std::size_t lineno = 0;
    while (next_line(in, line)) {
        ++lineno;
        if (trim(line).empty()) continue;
        ctx.record();
        auto kv = split_record(line);
        auto get = [&](std::string_view k) -> std::optional<std::string_view> {
            auto it = kv.find(k);
            if (it == kv.end()) return std::nullopt;
            return it->second;
        };
        for (const char* required : {"JobId", "JobState", "StartTime", "EndTime", "NodeCnt"})
            if (!get(required)) {
                ctx.bad(lineno, std::string("no ") + required + "= (not a jobcomp/filetxt record?)");
                goto next;
            }
        {
            TraceJob job;
            job.line = lineno;
            auto id = parse_int(*get("JobId"));
            if (!id || *id < 0) {
                ctx.bad(lineno, "JobId '" + std::string(*get("JobId")) + "' is not a job number");
                continue;
            }
            job.id = static_cast<std::uint64_t>(*id);
            if (auto v = get("Name")) job.name = *v;
            if (auto v = get("UserId")) job.user = v->substr(0, v->find('('));  // name(uid)
            if (auto v = get("Partition")) job.partition = *v;
            job.state = *get("JobState");
            if (auto v = get("NodeList"); v && *v != "(null)") job.node_list = *v;

            auto start_text = *get("StartTime"), end_text = *get("EndTime");
            if (no_time(start_text)) {
                ctx.skip("never started");
                continue;
            }
            auto start = parse_datetime(start_text);
            auto end = no_time(end_text) ? std::nullopt : parse_datetime(end_text);
            if (!start) {
                ctx.bad(lineno, "StartTime '" + std::string(start_text) + "' is not a time");
                continue;
            }
            if (!end) {
                ctx.bad(lineno, "EndTime '" + std::string(end_text) + "' is not a time");
                continue;
            }
            job.recorded_start = *start;
            job.run_time = *end - *start;
            if (job.run_time <= 0) {
                ctx.skip("ran for 0 s");
                continue;
            }
            std::optional<double> submit;
            if (auto v = get("SubmitTime"); v && !no_time(*v)) {
                submit = parse_datetime(*v);
                if (!submit) {
                    ctx.bad(lineno, "SubmitTime '" + std::string(*v) + "' is not a time");
                    continue;
                }
            }
            if (!submit) {
                if (auto v = get("EligibleTime"); v && !no_time(*v)) submit = parse_datetime(*v);
                if (submit) ctx.note("no SubmitTime: EligibleTime used");
            }
            if (!submit) {
                submit = start;
                ctx.note("no SubmitTime: StartTime used");
            }
            job.submit = *submit;

            if (auto v = get("TimeLimit"); v && *v != "UNLIMITED" && *v != "Partition_Limit" && !v->empty()) {
                auto m = parse_int(*v);
                if (!m || *m < 0) {
                    ctx.bad(lineno, "TimeLimit '" + std::string(*v) + "' is not minutes or UNLIMITED");
                    continue;
                }
                job.time_limit = static_cast<double>(*m) * 60;
            }
            auto nodes = parse_count(*get("NodeCnt"));
            if (!nodes) {
                ctx.bad(lineno, "NodeCnt '" + std::string(*get("NodeCnt")) + "' is not a node count");
                continue;
            }
            job.nodes = *nodes;
            if (auto v = get("ProcCnt"))
                if (auto n = parse_count(*v)) job.cpus = *n;
            auto gpus = tres_gpus(get("Tres") ? *get("Tres") : std::string_view{});
            if (!gpus) {
                ctx.bad(lineno, "the gres/gpu count in Tres='" + std::string(*get("Tres")) + "' is not a number");
                continue;
            }
            job.gpus = *gpus;
            ctx.keep(std::move(job));
        }
    next:;
    }
}

}  // namespace coloc::replay
