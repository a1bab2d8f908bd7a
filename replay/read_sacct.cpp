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

// sacct's header: the fields by lower-case name, checked for what a job needs.
struct Header {
    std::map<std::string, std::size_t> col;
    std::size_t columns = 0;  // 0: not read yet
    bool has(const char* name) const { return col.count(name) > 0; }
};

Header read_header(std::vector<std::string_view> fields, std::size_t lineno, const ReaderContext& ctx) {
    Header h;
    if (fields.size() > 1 && trim(fields.back()).empty()) fields.pop_back();  // sacct -p ends with '|'
    for (std::size_t i = 0; i < fields.size(); ++i) h.col[lower(trim(fields[i]))] = i;
    h.columns = fields.size();
    if (!h.has("jobidraw") && !h.has("jobid"))
        ctx.fatal(lineno,
                  "the first line must be sacct's header with JobIDRaw or JobID "
                  "(run sacct -P without -n/--noheader)");
    if (!h.has("submit") && !h.has("start")) ctx.fatal(lineno, "the header has neither Submit nor Start field");
    if (!h.has("alloctres") && !h.has("reqtres"))
        ctx.fatal(lineno, "the header has neither AllocTRES nor ReqTRES (the GPUs come from gres/gpu)");
    if (!h.has("elapsedraw") && !h.has("elapsed") && !(h.has("start") && h.has("end")))
        ctx.fatal(lineno, "the header has no ElapsedRaw, Elapsed or Start and End");
    return h;
}

// One record, read stage by stage.
class Record : public RecordStages {
public:
    Record(const Header& h, const std::vector<std::string_view>& fields, std::size_t lineno, ReaderContext& ctx)
        : RecordStages(ctx, lineno), h_(h), fields_(fields) {}

    std::optional<std::string_view> get(const char* name) const {
        auto it = h_.col.find(name);
        if (it == h_.col.end()) return std::nullopt;
        return trim(fields_[it->second]);
    }

    bool id() {
        std::string_view id_text = get("jobidraw") ? *get("jobidraw") : *get("jobid");
        if (id_text.find('.') != std::string_view::npos) return skip("job step (use sacct -X)");
        // Array and heterogeneous job ids ("12_3", "12+1") keep their leading number.
        std::string_view id_num = id_text.substr(0, id_text.find_first_of("_+["));
        auto id = parse_int(id_num);
        if (!id || *id < 0) return bad("JobID '" + std::string(id_text) + "' is not a job number");
        job.id = static_cast<std::uint64_t>(*id);
        return true;
    }

    void labels() {
        if (auto v = get("jobname")) job.name = *v;
        if (auto v = get("user")) job.user = *v;
        if (auto v = get("partition")) job.partition = *v;
        if (auto v = get("state")) job.state = std::string(v->substr(0, v->find(' ')));  // "CANCELLED by 0"
        if (auto v = get("comment")) job.profile = comment_profile(*v);
    }

    // Submit, Start and End, and how long it ran.
    bool times() {
        if (auto v = get("submit")) {
            auto submit = parse_datetime(*v);
            if (!submit) return bad("Submit '" + std::string(*v) + "' is not a time (YYYY-MM-DDTHH:MM:SS)");
            job.submit = *submit;
        }
        std::optional<double> start, end;
        if (!moment("start", "Start", start) || !moment("end", "End", end)) return false;
        if (get("start") && !start) return skip("never started");
        if (get("end") && !end) return skip("still running");
        std::optional<double> elapsed;
        if (auto v = get("elapsedraw")) {
            auto e = parse_int(*v);
            if (!e || *e < 0) return bad("ElapsedRaw '" + std::string(*v) + "' is not a number of seconds");
            elapsed = static_cast<double>(*e);
        } else if (auto v = get("elapsed")) {
            elapsed = parse_slurm_duration(*v);
            if (!elapsed) return bad("Elapsed '" + std::string(*v) + "' is not a duration");
        } else {
            elapsed = *end - *start;
        }
        if (start) job.recorded_start = *start;
        if (!get("submit")) {
            job.submit = *start;  // the header guarantees Start when it has no Submit
            ctx_.note("no Submit field: submitted when it started");
        }
        job.run_time = *elapsed;
        if (job.run_time <= 0) return skip("ran for 0 s");
        return true;
    }

    bool limit() {
        const bool raw = h_.has("timelimitraw");
        if (auto v = raw ? get("timelimitraw") : get("timelimit")) {
            auto l = limit_minutes(*v, raw);
            if (!l)
                return bad(std::string(raw ? "TimelimitRaw" : "Timelimit") + " '" + std::string(*v) +
                           "' is not a time limit");
            job.time_limit = *l;
        }
        return true;
    }

    // Nodes, CPUs, GPUs and where it ran.
    bool resources() {
        if (auto v = get("nnodes"); v && !v->empty()) {
            auto n = parse_count(*v);
            if (!n) return bad("NNodes '" + std::string(*v) + "' is not a node count");
            job.nodes = *n;
        }
        if (auto v = get("ncpus"); v && !v->empty())
            if (auto n = parse_count(*v)) job.cpus = *n;
        std::optional<std::string_view> tres = get("alloctres");
        if (!tres || tres->empty()) tres = get("reqtres");
        auto gpus = tres_gpus(tres ? *tres : std::string_view{});
        if (!gpus) return bad("the gres/gpu count in '" + std::string(*tres) + "' is not a number");
        job.gpus = *gpus;
        if (auto v = get("nodelist"); v && !v->empty() && *v != "None assigned") job.node_list = *v;
        return true;
    }

private:
    // A time field that may say it did not happen; false when it is not a time.
    bool moment(const char* name, const char* shown, std::optional<double>& at) {
        if (auto v = get(name); v && !no_time(*v)) {
            at = parse_datetime(*v);
            if (!at) return bad(std::string(shown) + " '" + std::string(*v) + "' is not a time");
        }
        return true;
    }

    const Header& h_;
    const std::vector<std::string_view>& fields_;
};

}  // namespace

void read_sacct(std::istream& in, Trace& trace, const ReadOptions& options) {
    ReaderContext ctx(trace, options);
    std::string line;
    std::size_t lineno = 0;
    Header header;
    while (next_line(in, line)) {
        ++lineno;
        if (trim(line).empty()) continue;
        auto fields = split(line, '|');
        if (header.columns == 0) {
            header = read_header(std::move(fields), lineno, ctx);
            continue;
        }
        ctx.record();
        if (fields.size() == header.columns + 1 && trim(fields.back()).empty()) fields.pop_back();
        if (fields.size() != header.columns) {
            ctx.bad(lineno,
                    std::to_string(fields.size()) + " fields where the header has " + std::to_string(header.columns));
            continue;
        }
        Record r(header, fields, lineno, ctx);
        if (!r.id()) continue;
        r.labels();
        if (r.times() && r.limit() && r.resources()) ctx.keep(std::move(r.job));
    }
    if (header.columns == 0) ctx.fatal(lineno, "no header line: is this sacct -P output?");
}

}  // namespace coloc::replay
