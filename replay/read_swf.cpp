#include <cmath>
#include <istream>

#include "replay/reader_context.hpp"
#include "replay/readers.hpp"
#include "replay/text.hpp"

namespace coloc::replay {

// SWF (Feitelson's Standard Workload Format, version 2.2): 18 blank-separated fields per job,
// -1 = unknown; ';' starts a header comment. Fields used: 1 job number, 2 submit time, 3 wait
// time, 4 run time, 5 allocated processors, 8 requested processors, 9 requested time, 11 status,
// 12 user id, 15 queue number, 16 partition number. Processors are read as GPUs.
// SWF fields are integers: beyond 1e15 a value is no real log's, and would overflow the
// conversions below.
constexpr double kMaxField = 1e15;

void read_swf(std::istream& in, Trace& trace, const ReadOptions& options) {
    ReaderContext ctx(trace, options);
    std::string line;
    std::size_t lineno = 0;
    while (next_line(in, line)) {
        ++lineno;
        auto t = trim(line);
        if (t.empty() || t.front() == ';') continue;
        ctx.record();
        auto f = split_blanks(t);
        if (f.size() != 18) {
            ctx.bad(lineno, std::to_string(f.size()) + " fields where SWF has 18");
            continue;
        }
        double v[18];
        bool ok = true;
        for (std::size_t i = 0; i < 18 && ok; ++i) {
            auto n = parse_number(f[i]);
            if (!n) {
                ctx.bad(lineno, "field " + std::to_string(i + 1) + " '" + std::string(f[i]) + "' is not a number");
                ok = false;
            } else if (std::fabs(*n) > kMaxField) {
                ctx.bad(lineno, "field " + std::to_string(i + 1) + " '" + std::string(f[i]) + "' is out of range");
                ok = false;
            } else {
                v[i] = *n;
            }
        }
        if (!ok) continue;
        if (v[0] < 0) {
            ctx.bad(lineno, "job number " + std::string(f[0]) + " is negative");
            continue;
        }
        if (v[1] < 0) {
            ctx.bad(lineno, "submit time " + std::string(f[1]) + " is negative");
            continue;
        }
        TraceJob job;
        job.line = lineno;
        job.id = static_cast<std::uint64_t>(v[0]);
        job.submit = v[1];
        if (v[3] <= 0) {
            ctx.skip(v[3] < 0 ? "no run time" : "ran for 0 s");
            continue;
        }
        job.run_time = v[3];
        if (v[2] >= 0) job.recorded_start = v[1] + v[2];
        double procs = v[4] > 0 ? v[4] : v[7];
        if (procs > kMaxCount) {
            ctx.bad(lineno,
                    "processor count " + std::string(f[v[4] > 0 ? 4 : 7]) + " is over " + std::to_string(kMaxCount));
            continue;
        }
        job.gpus = procs > 0 ? static_cast<int>(procs) : 0;
        job.time_limit = v[8] > 0 ? v[8] : 0;
        static const char* kStatus[] = {"FAILED", "COMPLETED", "PARTIAL", "PARTIAL", "PARTIAL", "CANCELLED"};
        job.state = (v[10] >= 0 && v[10] <= 5) ? kStatus[static_cast<int>(v[10])] : "UNKNOWN";
        if (v[11] >= 0) job.user = std::to_string(static_cast<long long>(v[11]));
        if (v[15] >= 0)
            job.partition = std::to_string(static_cast<long long>(v[15]));
        else if (v[14] >= 0)
            job.partition = std::to_string(static_cast<long long>(v[14]));
        ctx.keep(std::move(job));
    }
}

}  // namespace coloc::replay
