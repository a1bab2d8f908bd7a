// Gavel's measured throughputs (MIT, see data/gavel/LICENSE): solo ones give the jobs of a Gavel
// trace their run times (total_steps / steps per second of the job type at its scale factor); with
// the same-GPU pairs they make the built-in catalogue and truth of `colocctl replay`. The tables are
// data/gavel/solo.csv and data/gavel/pairs.csv, built into the library (data/README.md).
#pragma once

#include <iosfwd>
#include <stdexcept>
#include <string>
#include <vector>

#include "model/measurements.hpp"
#include "replay/trace.hpp"

namespace coloc::replay {

struct GavelSolo {
    std::string job_type;  // Gavel's name: "ResNet-18 (batch size 16)"
    int scale_factor = 1;
    double k80 = 0, p100 = 0, v100 = 0;  // steps per second; 0 = not measured
};

// The built-in data/gavel/solo.csv, parsed at first use.
const std::vector<GavelSolo>& gavel_solo_throughputs();

struct GavelPair {
    std::string gpu_type;
    std::string job;  // catalogue names (model::io::gavel_job_name)
    std::string neighbour;
    double speed = 0;  // job's speed beside neighbour on one GPU, relative to solo; 0 = could not co-run
};

// The built-in data/gavel/pairs.csv, parsed at first use.
const std::vector<GavelPair>& gavel_pair_speeds();

// The readers of those two files (job_type,scale_factor,k80,p100,v100 and gpu_type,job,neighbour,
// speed; '#' lines are comments). Errors name `source` and the line.
std::vector<GavelSolo> parse_gavel_solo_csv(std::istream& in, const std::string& source);
std::vector<GavelPair> parse_gavel_pairs_csv(std::istream& in, const std::string& source);

// Steps per second of `job_type` at `scale_factor` on `gpu_type` (k80, p100, v100); 0 = unknown.
double gavel_solo_throughput(const std::string& job_type, int scale_factor, const std::string& gpu_type);

// The one-GPU solo rows of the table as coloc measurements (catalogue names, families, batch
// sizes, steps per second per GPU type): enough for model::catalogue_from to make a catalogue
// of Gavel's job types without any pair.
model::Measurements gavel_solo_measurements();
// The same with the same-GPU pairs that could co-run (as throughputs beside the neighbour): the
// built-in catalogue of `colocctl replay`, with Gavel's measurements on all three GPU types.
model::Measurements gavel_measurements();

// The GPU type asked for has no measurements where they are needed (Gavel's tables, a pair
// file): the fault of whoever chose the type (colocctl names its --gpu-type), not of a file.
struct GpuTypeError : std::invalid_argument {
    using std::invalid_argument::invalid_argument;
};

// Sets run_time = steps / throughput for the jobs of a Gavel trace on `gpu_type`. A scale factor
// Gavel did not measure uses the one-GPU throughput (the job is taken not to speed up; counted
// in trace.notes). An unknown job type throws TraceError naming the line; a GPU type Gavel did
// not measure throws GpuTypeError, and only when a job needs it (other traces carry run times).
void resolve_gavel_run_times(Trace& trace, const std::string& gpu_type);

}  // namespace coloc::replay
