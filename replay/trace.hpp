// A job log as the replay sees it, whatever format it was read from: when each job was
// submitted, what it asked for (GPUs, nodes, time limit), how long it ran alone, and what kind
// of job it was (its profile), where the log says so.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace coloc::replay {

enum class TraceFormat { Sacct, Jobcomp, ColocHistory, Swf, Helios, Gavel, Tiresias };

const char* to_string(TraceFormat format);
std::optional<TraceFormat> format_from_string(const std::string& name);
// "sacct, jobcomp, coloc-history, swf, helios, gavel, tiresias"
std::string format_names();

struct RecordedPlacement {
    std::string node;
    std::vector<int> gpus;
};

struct TraceJob {
    std::uint64_t id = 0;
    std::string name;
    std::string user;
    std::string partition;
    std::string profile;    // the job's kind where the log says it; empty = unknown
    double submit = 0;      // seconds (epoch or trace-relative; only differences matter)
    double run_time = 0;    // how long it ran (seconds), taken as its solo run time
    double time_limit = 0;  // requested limit (seconds); 0 = none given
    int gpus = 0;           // in total, over all its nodes
    int nodes = 0;          // 0 = not given (the replay derives it from the GPUs per node)
    int cpus = 0;
    std::string state;                          // as logged: COMPLETED, FAILED, ...
    double recorded_start = -1;                 // when it really started, -1 = unknown
    std::string node_list;                      // Slurm hostlist it ran on, as logged
    std::vector<RecordedPlacement> placements;  // where it really ran, GPUs included (coloc-history)
    double steps = 0;                           // Gavel: training steps; run_time comes from a throughput table
    int scale_factor = 0;                       // Gavel: GPUs the job type was measured with
    std::size_t line = 0;                       // where it was read
};

struct BadLine {
    std::size_t line = 0;
    std::string why;
};

struct Trace {
    TraceFormat format = TraceFormat::Sacct;
    std::string source;  // file name (or "<embedded demo>")
    std::vector<TraceJob> jobs;
    std::size_t records = 0;                     // data records seen (jobs kept + skipped)
    std::size_t bad = 0;                         // malformed records skipped under skip_bad
    std::vector<BadLine> bad_lines;              // the first few, for the report
    std::map<std::string, std::size_t> skipped;  // well-formed records not replayed, by reason
    std::map<std::string, std::size_t> notes;    // records kept with a stand-in value, by what
};

struct ReadOptions {
    bool skip_bad = false;  // skip and count malformed records instead of failing
    std::size_t bad_lines_kept = 20;
};

// A malformed record: "FILE:LINE: why". Thrown by the readers unless skip_bad.
class TraceError : public std::runtime_error {
public:
    TraceError(const std::string& source, std::size_t line, const std::string& why);
    TraceError(const std::string& source, const std::string& why);
    std::size_t line() const { return line_; }

private:
    std::size_t line_ = 0;
};

}  // namespace coloc::replay
