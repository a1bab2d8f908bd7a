#include <istream>

#include "replay/reader_context.hpp"
#include "replay/readers.hpp"
#include "replay/text.hpp"

namespace coloc::replay {

// Tiresias' simulator traces: job_id,num_gpu,submit_time,iterations,model_name,duration,interval
// (seconds; `interval` is the model's iteration count between checkpoints, not used here).
void read_tiresias(std::istream& in, Trace& trace, const ReadOptions& options) {
    ReaderContext ctx(trace, options);
    static const std::vector<std::string> kHeader = {"job_id",     "num_gpu",  "submit_time", "iterations",
                                                     "model_name", "duration", "interval"};
    std::string line;
    std::size_t lineno = 0;
    bool header = false;
    while (next_line(in, line)) {
        ++lineno;
        if (trim(line).empty()) continue;
        auto f = split_csv(line);
        if (!header) {
            if (!f || f->size() != kHeader.size())
                ctx.fatal(lineno,
                          "the header must be job_id,num_gpu,submit_time,iterations,model_name,duration,interval");
            for (std::size_t i = 0; i < kHeader.size(); ++i)
                if (trim((*f)[i]) != kHeader[i])
                    ctx.fatal(lineno, "header column " + std::to_string(i + 1) + " is '" + std::string(trim((*f)[i])) +
                                          "', expected '" + kHeader[i] + "'");
            header = true;
            continue;
        }
        ctx.record();
        if (!f || f->size() != kHeader.size()) {
            ctx.bad(lineno, "expected 7 fields: job_id,num_gpu,submit_time,iterations,model_name,duration,interval");
            continue;
        }
        auto id = parse_int((*f)[0]);
        auto gpus = parse_int((*f)[1]);
        auto submit = parse_number((*f)[2]);
        auto duration = parse_number((*f)[5]);
        const char* wrong = !id || *id < 0                            ? "job_id is not a job number"
                            : !gpus || *gpus < 0 || *gpus > kMaxCount ? "num_gpu is not a GPU count"
                            : !submit || *submit < 0                  ? "submit_time is not a number of seconds"
                            : !duration || *duration < 0              ? "duration is not a number of seconds"
                                                                      : nullptr;
        if (wrong) {
            ctx.bad(lineno, wrong);
            continue;
        }
        if (*duration == 0) {
            ctx.skip("ran for 0 s");
            continue;
        }
        TraceJob job;
        job.line = lineno;
        job.id = static_cast<std::uint64_t>(*id);
        job.gpus = static_cast<int>(*gpus);
        job.submit = *submit;
        job.run_time = *duration;
        job.profile = std::string(trim((*f)[4]));
        job.name = job.profile;
        if (auto it = parse_number((*f)[3])) job.steps = *it;
        ctx.keep(std::move(job));
    }
    if (!header) ctx.fatal(lineno, "no header line");
}

}  // namespace coloc::replay
