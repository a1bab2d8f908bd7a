#include <algorithm>
#include <cctype>
#include <istream>
#include <map>

#include "replay/reader_context.hpp"
#include "replay/readers.hpp"
#include "replay/text.hpp"

namespace coloc::replay {

namespace {

// Slurm prints "Unknown" or "None" for a time that did not happen.
bool no_time(std::string_view s) {
    s = trim(s);
    return s.empty() || s == "Unknown" || s == "None" || s == "unknown";
}

// A limit in minutes ("UNLIMITED", "Partition_Limit" and empty = none).
std::optional<double> limit_minutes(std::string_view s, bool raw) {
    s = trim(s);
    if (s.empty() || s == "UNLIMITED" || s == "Partition_Limit" || s == "INVALID") return 0.0;
    if (raw) {
        auto m = parse_int(s);
        if (!m || *m < 0) return std::nullopt;
        return static_cast<double>(*m) * 60;
    }
    return parse_slurm_duration(s);
}

// A site may name a job's profile in its comment (sbatch --comment=coloc-profile=NAME).
std::string comment_profile(std::string_view comment) {
    constexpr std::string_view kKey = "coloc-profile=";
    const std::size_t at = comment.find(kKey);
    if (at == std::string_view::npos) return "";
    std::string_view rest = comment.substr(at + kKey.size());
    return std::string(trim(rest.substr(0, rest.find_first_of(" ,;"))));
}

}  // namespace

void read_sacct(std::istream& in, Trace& trace, const ReadOptions& options) {
    ReaderContext ctx(trace, options);
    std::string line;
    std::size_t lineno = 0;
    std::map<std::string, std::size_t> col;
    std::size_t columns = 0;
    while (next_line(in, line)) {
        ++lineno;
        if (trim(line).empty()) continue;
        auto fields = split(line, '|');
        if (columns == 0) {
            if (fields.size() > 1 && trim(fields.back()).empty()) fields.pop_back();  // sacct -p ends with '|'
            for (std::size_t i = 0; i < fields.size(); ++i) col[lower(trim(fields[i]))] = i;
            columns = fields.size();
            if (!col.count("jobidraw") && !col.count("jobid"))
                ctx.fatal(lineno,
                          "the first line must be sacct's header with JobIDRaw or JobID "
                          "(run sacct -P without -n/--noheader)");
            if (!col.count("submit") && !col.count("start"))
                ctx.fatal(lineno, "the header has neither Submit nor Start field");
            if (!col.count("alloctres") && !col.count("reqtres"))
                ctx.fatal(lineno, "the header has neither AllocTRES nor ReqTRES (the GPUs come from gres/gpu)");
            if (!col.count("elapsedraw") && !col.count("elapsed") && !(col.count("start") && col.count("end")))
                ctx.fatal(lineno, "the header has no ElapsedRaw, Elapsed or Start and End");
            continue;
        }
        ctx.record();
        if (fields.size() == columns + 1 && trim(fields.back()).empty()) fields.pop_back();
        if (fields.size() != columns) {
            ctx.bad(lineno, std::to_string(fields.size()) + " fields where the header has " + std::to_string(columns));
            continue;
        }
        auto get = [&](const char* name) -> std::optional<std::string_view> {
            auto it = col.find(name);
            if (it == col.end()) return std::nullopt;
            return trim(fields[it->second]);
        };
        std::string_view id_text = get("jobidraw") ? *get("jobidraw") : *get("jobid");
        if (id_text.find('.') != std::string_view::npos) {
            ctx.skip("job step (use sacct -X)");
            continue;
        }
        // Array and heterogeneous job ids ("12_3", "12+1") keep their leading number.
        std::string_view id_num = id_text.substr(0, id_text.find_first_of("_+["));
        auto id = parse_int(id_num);
        if (!id || *id < 0) {
            ctx.bad(lineno, "JobID '" + std::string(id_text) + "' is not a job number");
            continue;
        }
        TraceJob job;
        job.id = static_cast<std::uint64_t>(*id);
        job.line = lineno;
        if (auto v = get("jobname")) job.name = *v;
        if (auto v = get("user")) job.user = *v;
        if (auto v = get("partition")) job.partition = *v;
        if (auto v = get("state")) job.state = std::string(v->substr(0, v->find(' ')));  // "CANCELLED by 0"

        if (auto v = get("comment")) job.profile = comment_profile(*v);
        if (auto v = get("submit")) {
            auto submit = parse_datetime(*v);
            if (!submit) {
                ctx.bad(lineno, "Submit '" + std::string(*v) + "' is not a time (YYYY-MM-DDTHH:MM:SS)");
                continue;
            }
            job.submit = *submit;
        }

        std::optional<double> start, end;
        if (auto v = get("start"); v && !no_time(*v)) {
            start = parse_datetime(*v);
            if (!start) {
                ctx.bad(lineno, "Start '" + std::string(*v) + "' is not a time");
                continue;
            }
        }
        if (auto v = get("end"); v && !no_time(*v)) {
            end = parse_datetime(*v);
            if (!end) {
                ctx.bad(lineno, "End '" + std::string(*v) + "' is not a time");
                continue;
            }
        }
        if (get("start") && !start) {
            ctx.skip("never started");
            continue;
        }
        if (get("end") && !end) {
            ctx.skip("still running");
            continue;
        }
        std::optional<double> elapsed;
        if (auto v = get("elapsedraw")) {
            auto e = parse_int(*v);
            if (!e || *e < 0) {
                ctx.bad(lineno, "ElapsedRaw '" + std::string(*v) + "' is not a number of seconds");
                continue;
            }
            elapsed = static_cast<double>(*e);
        } else if (auto v = get("elapsed")) {
            elapsed = parse_slurm_duration(*v);
            if (!elapsed) {
                ctx.bad(lineno, "Elapsed '" + std::string(*v) + "' is not a duration");
                continue;
            }
        } else {
            elapsed = *end - *start;
        }
        if (start) job.recorded_start = *start;
        if (!get("submit")) {
            job.submit = *start;  // the header guarantees Start when it has no Submit
            ctx.note("no Submit field: submitted when it started");
        }
        job.run_time = *elapsed;
        if (job.run_time <= 0) {
            ctx.skip("ran for 0 s");
            continue;
        }

        const bool raw_limit = col.count("timelimitraw") > 0;
        if (auto v = raw_limit ? get("timelimitraw") : get("timelimit")) {
            auto l = limit_minutes(*v, raw_limit);
            if (!l) {
                ctx.bad(lineno, std::string(raw_limit ? "TimelimitRaw" : "Timelimit") + " '" + std::string(*v) +
                                    "' is not a time limit");
                continue;
            }
            job.time_limit = *l;
        }
        if (auto v = get("nnodes"); v && !v->empty()) {
            auto n = parse_count(*v);
            if (!n) {
                ctx.bad(lineno, "NNodes '" + std::string(*v) + "' is not a node count");
                continue;
            }
            job.nodes = *n;
        }
        if (auto v = get("ncpus"); v && !v->empty())
            if (auto n = parse_count(*v)) job.cpus = *n;

        std::optional<std::string_view> tres = get("alloctres");
        if (!tres || tres->empty()) tres = get("reqtres");
        auto gpus = tres_gpus(tres ? *tres : std::string_view{});
        if (!gpus) {
            ctx.bad(lineno, "the gres/gpu count in '" + std::string(*tres) + "' is not a number");
            continue;
        }
        job.gpus = *gpus;
        if (auto v = get("nodelist"); v && !v->empty() && *v != "None assigned") job.node_list = *v;
        ctx.keep(std::move(job));
    }
    if (columns == 0) ctx.fatal(lineno, "no header line: is this sacct -P output?");
}

}  // namespace coloc::replay
