#include <algorithm>
#include <cctype>
#include <istream>
#include <map>

#include "replay/reader_context.hpp"
#include "replay/readers.hpp"
#include "replay/record_stages.hpp"
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

using Column = std::optional<std::size_t>;

// The header: where each field is (the first of its names present), checked for what a job needs.
struct Columns {
    std::size_t count = 0;  // 0: not read yet
    Column id, user, name, gpus, cpus, nodes, submit, interval, start, end, run, limit, state, partition, profile;
};

Columns read_header(const std::vector<std::string>& fields, std::size_t lineno, const ReaderContext& ctx) {
    std::map<std::string, std::size_t> col;
    for (std::size_t i = 0; i < fields.size(); ++i) col[lower(trim(fields[i]))] = i;
    auto find = [&](const std::vector<std::string>& names) -> Column {
        for (const auto& n : names)
            if (auto it = col.find(n); it != col.end()) return it->second;
        return std::nullopt;
    };
    Columns c;
    c.count = fields.size();
    c.id = find(kId), c.user = find(kUser), c.name = find(kName), c.gpus = find(kGpus), c.cpus = find(kCpus);
    c.nodes = find(kNodes), c.submit = find(kSubmit), c.interval = find(kInterval), c.start = find(kStart);
    c.end = find(kEnd), c.run = find(kRun), c.limit = find(kLimit), c.state = find(kState);
    c.partition = find(kPartition), c.profile = find(kProfile);
    if (!c.gpus) ctx.fatal(lineno, "the header has no GPU column (gpu_num, num_gpu, num_gpus or gpus)");
    if (!c.submit && !c.interval) ctx.fatal(lineno, "the header has no submit_time or interval column");
    if (!c.run && !(c.start && c.end))
        ctx.fatal(lineno, "the header has no duration/run_time column and no start_time and end_time");
    return c;
}

// What runs on from record to record: the next id for records without one, and the submit
// clock when the log gives intervals.
struct Sequence {
    std::uint64_t next_id = 1;
    double clock = 0;
};

// One record, read stage by stage.
class Record : public RecordStages {
public:
    Record(const Columns& c, const std::vector<std::string>& fields, std::size_t lineno, ReaderContext& ctx)
        : RecordStages(ctx, lineno), c_(c), fields_(fields) {}

    void id_and_labels(Sequence& seq) {
        if (c_.id) {
            auto id = parse_int(get(c_.id));
            // Helios ids are numbers; some derived traces use hashes: number those in order.
            job.id = (id && *id >= 0) ? static_cast<std::uint64_t>(*id) : seq.next_id;
            if (!id) job.name = get(c_.id);
        } else {
            job.id = seq.next_id;
        }
        ++seq.next_id;
        if (c_.user) job.user = get(c_.user);
        if (c_.name) job.name = get(c_.name);
        if (c_.partition) job.partition = get(c_.partition);
        if (c_.state) job.state = get(c_.state);
        if (c_.profile) job.profile = get(c_.profile);
    }

    bool resources() {
        auto gpus = parse_count(get(c_.gpus));
        if (!gpus) return bad("GPU count '" + std::string(get(c_.gpus)) + "' is not a number");
        job.gpus = *gpus;
        if (c_.cpus)
            if (auto n = parse_count(get(c_.cpus))) job.cpus = *n;
        if (c_.nodes && !get(c_.nodes).empty()) {
            auto n = parse_count(get(c_.nodes));
            if (!n) return bad("node count '" + std::string(get(c_.nodes)) + "' is not a number");
            job.nodes = *n;
        }
        return true;
    }

    bool submit(Sequence& seq) {
        if (c_.submit) {
            auto t = time_value(get(c_.submit));
            if (!t) return bad("submit time '" + std::string(get(c_.submit)) + "' is not a time");
            job.submit = *t;
            return true;
        }
        auto i = parse_number(get(c_.interval));
        if (!i || *i < 0) return bad("interval '" + std::string(get(c_.interval)) + "' is not a number of seconds");
        seq.clock += *i;
        job.submit = seq.clock;
        return true;
    }

    // How long it ran (and when it started, when the log says).
    bool run_time() {
        std::optional<double> start, end;
        if (c_.start && !get(c_.start).empty()) start = time_value(get(c_.start));
        if (c_.end && !get(c_.end).empty()) end = time_value(get(c_.end));
        if (start) job.recorded_start = *start;
        if (c_.run) {
            auto r = parse_number(get(c_.run));
            if (!r) return bad("run time '" + std::string(get(c_.run)) + "' is not a number of seconds");
            job.run_time = *r;
        } else if (start && end) {
            job.run_time = *end - *start;
        } else {
            return skip("never started");
        }
        if (job.run_time <= 0) return skip("ran for 0 s");
        return true;
    }

    void limit() {
        if (c_.limit)
            if (auto l = parse_number(get(c_.limit)); l && *l > 0) job.time_limit = *l;
    }

private:
    std::string_view get(Column c) const { return trim(fields_[*c]); }

    const Columns& c_;
    const std::vector<std::string>& fields_;
};

}  // namespace

void read_helios(std::istream& in, Trace& trace, const ReadOptions& options) {
    ReaderContext ctx(trace, options);
    std::string line;
    std::size_t lineno = 0;
    Columns columns;
    Sequence seq;
    while (next_line(in, line)) {
        ++lineno;
        if (trim(line).empty()) continue;
        auto fields = split_csv(line);
        if (columns.count == 0) {
            if (!fields) ctx.fatal(lineno, "the header has an unclosed quote");
            columns = read_header(*fields, lineno, ctx);
            continue;
        }
        ctx.record();
        if (!fields) {
            ctx.bad(lineno, "unclosed quote");
            continue;
        }
        if (fields->size() != columns.count) {
            ctx.bad(lineno,
                    std::to_string(fields->size()) + " fields where the header has " + std::to_string(columns.count));
            continue;
        }
        Record r(columns, *fields, lineno, ctx);
        r.id_and_labels(seq);
        if (!r.resources() || !r.submit(seq) || !r.run_time()) continue;
        r.limit();
        ctx.keep(std::move(r.job));
    }
    if (columns.count == 0) ctx.fatal(lineno, "no header line");
}

}  // namespace coloc::replay
