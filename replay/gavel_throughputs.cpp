#include "replay/gavel_throughputs.hpp"

#include "model/io/gavel_json.hpp"

namespace coloc::replay {

double gavel_solo_throughput(const std::string& job_type, int scale_factor, const std::string& gpu_type) {
    for (const GavelSolo& s : gavel_solo_throughputs()) {
        if (s.scale_factor != scale_factor || job_type != s.job_type) continue;
        if (gpu_type == "k80") return s.k80;
        if (gpu_type == "p100") return s.p100;
        if (gpu_type == "v100") return s.v100;
        return 0;
    }
    return 0;
}

model::Measurements gavel_solo_measurements() {
    model::Measurements m;
    for (const GavelSolo& s : gavel_solo_throughputs()) {
        if (s.scale_factor != 1) continue;
        auto n = model::io::gavel_job_name(s.job_type);
        for (auto [gpu, thr] : {std::pair{"k80", s.k80}, {"p100", s.p100}, {"v100", s.v100}})
            if (thr > 0) m.solo.push_back({n.name, n.family, n.batch_size, gpu, thr, 0});
    }
    return m;
}

model::Measurements gavel_measurements() {
    model::Measurements m = gavel_solo_measurements();
    for (const GavelPair& p : gavel_pair_speeds()) {
        if (p.speed <= 0) continue;
        double solo = 0;
        for (const auto& s : m.solo)
            if (s.job == p.job && s.gpu_type == p.gpu_type) solo = s.throughput;
        if (solo > 0) m.pairs.push_back({p.job, p.neighbour, p.gpu_type, model::Sharing::Gpu, p.speed * solo, 0});
    }
    return m;
}

void resolve_gavel_run_times(Trace& trace, const std::string& gpu_type) {
    if (gpu_type != "k80" && gpu_type != "p100" && gpu_type != "v100")
        throw TraceError(trace.source, "Gavel measured k80, p100 and v100, not '" + gpu_type + "'");
    for (TraceJob& job : trace.jobs) {
        if (job.steps <= 0 || job.run_time > 0) continue;
        double thr = gavel_solo_throughput(job.name, job.scale_factor, gpu_type);
        if (thr <= 0) {
            thr = gavel_solo_throughput(job.name, 1, gpu_type);
            if (thr > 0) ++trace.notes["Gavel scale factor not measured: one-GPU throughput used"];
        }
        if (thr <= 0)
            throw TraceError(trace.source, job.line,
                             "job type '" + job.name + "' has no solo throughput on " + gpu_type + " in Gavel's table");
        job.run_time = job.steps / thr;
    }
}

}  // namespace coloc::replay
