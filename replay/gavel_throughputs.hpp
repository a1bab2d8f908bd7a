// Gavel's measured solo throughputs (MIT, see data/gavel/LICENSE), to give the jobs of a
// Gavel trace their run times: total_steps / steps per second of the job type at its scale factor.
#pragma once

#include <string>
#include <vector>

#include "model/measurements.hpp"
#include "replay/trace.hpp"

namespace coloc::replay {

struct GavelSolo {
    const char* job_type;
    int scale_factor;
    double k80, p100, v100;  // steps per second; 0 = not measured
};

const std::vector<GavelSolo>& gavel_solo_throughputs();

struct GavelPair {
    const char* gpu_type;
    const char* job;        // catalogue names (model::io::gavel_job_name)
    const char* neighbour;
    double speed;           // job's speed beside neighbour on one GPU, relative to solo; 0 = could not co-run
};

const std::vector<GavelPair>& gavel_pair_speeds();

// Steps per second of `job_type` at `scale_factor` on `gpu_type` (k80, p100, v100); 0 = unknown.
double gavel_solo_throughput(const std::string& job_type, int scale_factor, const std::string& gpu_type);

// The one-GPU solo rows of the table as coloc measurements (catalogue names, families, batch
// sizes, steps per second per GPU type): enough for model::catalogue_from to make a catalogue
// of Gavel's job types without any pair.
model::Measurements gavel_solo_measurements();
// The same with the same-GPU pairs that could co-run (as throughputs beside the neighbour): the
// built-in catalogue of `colocctl replay`, with Gavel's measurements on all three GPU types.
model::Measurements gavel_measurements();

// Sets run_time = steps / throughput for the jobs of a Gavel trace on `gpu_type`. A scale factor
// Gavel did not measure uses the one-GPU throughput (the job is taken not to speed up; counted
// in trace.notes). An unknown job type throws TraceError naming the line.
void resolve_gavel_run_times(Trace& trace, const std::string& gpu_type);

}  // namespace coloc::replay
