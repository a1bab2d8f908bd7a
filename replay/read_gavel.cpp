#include <istream>

#include "model/io/gavel_json.hpp"
#include "replay/reader_context.hpp"
#include "replay/readers.hpp"
#include "replay/text.hpp"

namespace coloc::replay {

// Gavel's older trace format (scheduler/traces/msr/...): seven tab-separated fields per job:
// job type, command, num_steps_arg, needs_data_dir (0/1), total_steps, arrival_time (s),
// scale_factor (GPUs). The job type is the job's name; its profile is the catalogue name that
// model::io gives Gavel's job types ("ResNet-18 (batch size 32)" -> resnet18-b32). The run time
// is total_steps divided by the type's solo throughput at that scale factor, filled in later
// (replay/gavel_throughputs.hpp).
void read_gavel(std::istream& in, Trace& trace, const ReadOptions& options) {
    ReaderContext ctx(trace, options);
    std::string line;
    std::size_t lineno = 0;
    std::uint64_t next_id = 0;
    while (next_line(in, line)) {
        ++lineno;
        if (trim(line).empty()) continue;
        ctx.record();
        auto f = split(line, '\t');
        if (f.size() != 7) {
            ctx.bad(lineno, std::to_string(f.size()) + " tab-separated fields where Gavel's trace has 7");
            continue;
        }
        auto needs_data = parse_int(f[3]);
        auto steps = parse_number(f[4]);
        auto arrival = parse_number(f[5]);
        auto scale = parse_int(f[6]);
        const char* wrong = trim(f[0]).empty()                                      ? "the job type is empty"
                            : !needs_data || (*needs_data != 0 && *needs_data != 1) ? "needs_data_dir is not 0 or 1"
                            : !steps || *steps <= 0                      ? "total_steps is not a positive number"
                            : !arrival || *arrival < 0                   ? "arrival_time is not a number of seconds"
                            : !scale || *scale < 1 || *scale > kMaxCount ? "scale_factor is not a GPU count"
                                                                         : nullptr;
        if (wrong) {
            ctx.bad(lineno, wrong);
            continue;
        }
        TraceJob job;
        job.line = lineno;
        job.id = next_id++;
        job.name = std::string(trim(f[0]));
        job.profile = model::io::gavel_job_name(job.name).name;
        job.steps = *steps;
        job.scale_factor = static_cast<int>(*scale);
        job.gpus = job.scale_factor;
        job.submit = *arrival;
        ctx.keep(std::move(job));
    }
}

}  // namespace coloc::replay
