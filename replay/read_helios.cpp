#include <algorithm>
#include <cctype>
#include <istream>
#include <map>

#include "replay/reader_context.hpp"
#include "replay/readers.hpp"
#include "replay/text.hpp"

namespace coloc::replay {

namespace {

// Column names seen in the Philly- and Helios-derived CSVs, first match wins.
const std::vector<std::string> kId = {"job_id", "jobid", "id", "u_id"};
const std::vector<std::string> kUser = {"user", "user_id", "uid"};
const std::vector<std::string> kName = {"job_name", "name"};
const std::vector<std::string> kGpus = {"gpu_num", "num_gpu", "num_gpus", "gpus"};
const std::vector<std::string> kCpus = {"cpu_num", "num_cpu", "cpus"};
const std::vector<std::string> kNodes = {"node_num", "num_node", "nodes"};
const std::vector<std::string> kSubmit = {"submit_time", "submitted_time", "submit"};
const std::vector<std::string> kInterval = {"interval"};
const std::vector<std::string> kStart = {"start_time", "start"};
const std::vector<std::string> kEnd = {"end_time", "end"};
const std::vector<std::string> kRun = {"duration", "run_time", "runtime"};
const std::vector<std::string> kLimit = {"time_limit", "timelimit"};
const std::vector<std::string> kState = {"state", "status"};
const std::vector<std::string> kPartition = {"vc", "queue", "partition"};
const std::vector<std::string> kProfile = {"model_name", "profile"};

// A time: epoch seconds, or "YYYY-MM-DD HH:MM:SS".
std::optional<double> time_value(std::string_view s) {
    if (auto n = parse_number(s)) return n;
    return parse_datetime(s);
}

}  // namespace

void read_helios(std::istream& in, Trace& trace, const ReadOptions& options) {
    ReaderContext ctx(trace, options);
    std::string line;
    std::size_t lineno = 0;
    std::map<std::string, std::size_t> col;
    std::size_t columns = 0;
    auto find = [&](const std::vector<std::string>& names) -> std::optional<std::size_t> {
        for (const auto& n : names)
            if (auto it = col.find(n); it != col.end()) return it->second;
        return std::nullopt;
    };
    std::optional<std::size_t> c_id, c_user, c_name, c_gpus, c_cpus, c_nodes, c_submit, c_interval, c_start, c_end,
        c_run, c_limit, c_state, c_part, c_profile;
    double clock = 0;  // running submit time when the log gives intervals
    std::uint64_t next_id = 1;
    while (next_line(in, line)) {
        ++lineno;
        if (trim(line).empty()) continue;
        auto fields = split_csv(line);
        if (columns == 0) {
            if (!fields) ctx.fatal(lineno, "the header has an unclosed quote");
            for (std::size_t i = 0; i < fields->size(); ++i) col[lower(trim((*fields)[i]))] = i;
            columns = fields->size();
            c_id = find(kId), c_user = find(kUser), c_name = find(kName), c_gpus = find(kGpus), c_cpus = find(kCpus);
            c_nodes = find(kNodes), c_submit = find(kSubmit), c_interval = find(kInterval), c_start = find(kStart);
            c_end = find(kEnd), c_run = find(kRun), c_limit = find(kLimit), c_state = find(kState);
            c_part = find(kPartition), c_profile = find(kProfile);
            if (!c_gpus) ctx.fatal(lineno, "the header has no GPU column (gpu_num, num_gpu, num_gpus or gpus)");
            if (!c_submit && !c_interval) ctx.fatal(lineno, "the header has no submit_time or interval column");
            if (!c_run && !(c_start && c_end))
                ctx.fatal(lineno, "the header has no duration/run_time column and no start_time and end_time");
            continue;
        }
        ctx.record();
        if (!fields) {
            ctx.bad(lineno, "unclosed quote");
            continue;
        }
        if (fields->size() != columns) {
            ctx.bad(lineno, std::to_string(fields->size()) + " fields where the header has " + std::to_string(columns));
            continue;
        }
        auto get = [&](std::optional<std::size_t> c) { return trim((*fields)[*c]); };
        TraceJob job;
        job.line = lineno;
        if (c_id) {
            auto id = parse_int(get(c_id));
            // Helios ids are numbers; some derived traces use hashes: number those in order.
            job.id = (id && *id >= 0) ? static_cast<std::uint64_t>(*id) : next_id;
            if (!id) job.name = get(c_id);
        } else {
            job.id = next_id;
        }
        ++next_id;
        if (c_user) job.user = get(c_user);
        if (c_name) job.name = get(c_name);
        if (c_part) job.partition = get(c_part);
        if (c_state) job.state = get(c_state);
        if (c_profile) job.profile = get(c_profile);
        auto gpus = parse_count(get(c_gpus));
        if (!gpus) {
            ctx.bad(lineno, "GPU count '" + std::string(get(c_gpus)) + "' is not a number");
            continue;
        }
        job.gpus = *gpus;
        if (c_cpus)
            if (auto n = parse_count(get(c_cpus))) job.cpus = *n;
        if (c_nodes && !get(c_nodes).empty()) {
            auto n = parse_count(get(c_nodes));
            if (!n) {
                ctx.bad(lineno, "node count '" + std::string(get(c_nodes)) + "' is not a number");
                continue;
            }
            job.nodes = *n;
        }
        if (c_submit) {
            auto t = time_value(get(c_submit));
            if (!t) {
                ctx.bad(lineno, "submit time '" + std::string(get(c_submit)) + "' is not a time");
                continue;
            }
            job.submit = *t;
        } else {
            auto i = parse_number(get(c_interval));
            if (!i || *i < 0) {
                ctx.bad(lineno, "interval '" + std::string(get(c_interval)) + "' is not a number of seconds");
                continue;
            }
            clock += *i;
            job.submit = clock;
        }
        std::optional<double> start, end;
        if (c_start && !get(c_start).empty()) start = time_value(get(c_start));
        if (c_end && !get(c_end).empty()) end = time_value(get(c_end));
        if (start) job.recorded_start = *start;
        if (c_run) {
            auto r = parse_number(get(c_run));
            if (!r) {
                ctx.bad(lineno, "run time '" + std::string(get(c_run)) + "' is not a number of seconds");
                continue;
            }
            job.run_time = *r;
        } else if (start && end) {
            job.run_time = *end - *start;
        } else {
            ctx.skip("never started");
            continue;
        }
        if (job.run_time <= 0) {
            ctx.skip("ran for 0 s");
            continue;
        }
        if (c_limit)
            if (auto l = parse_number(get(c_limit)); l && *l > 0) job.time_limit = *l;
        ctx.keep(std::move(job));
    }
    if (columns == 0) ctx.fatal(lineno, "no header line");
}

}  // namespace coloc::replay
