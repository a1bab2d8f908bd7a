// The service's learning part: what jobs report of themselves and what ended jobs took teach
// the model (when it learns) and the learned profiles; what was learned is stored before the
// reply and loaded again at start.
//   observe (learning.cpp): a job's measured iteration time with its neighbours now;
//   elapsed times (elapsed.cpp): an ended job's elapsed time over its co-location intervals,
//     one window of usable runs per GPU type, refitted every elapsed_refit_every runs;
//   solo runs (profiles.cpp): what a job that ran alone took is its profile's solo truth.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "daemon/service/access.hpp"
#include "daemon/service/state.hpp"
#include "model/elapsed_window.hpp"
#include "proto/auth.hpp"
#include "proto/envelope.hpp"

namespace coloc::daemon {

class Learning {
public:
    // Loads what was learned before (see load()).
    Learning(State& state, const Access& access);

    proto::json on_observe(const proto::Request& req, const proto::Identity& who);
    proto::json on_profiles(const proto::Request& req, const proto::Identity& who);

    // The job ended on its last node: its solo runtime when it ran alone, and what its elapsed
    // time teaches the pair delays.
    void job_ended(std::int64_t job_id, std::int64_t now);
    // Reads again what is stored: the model's learned parameters, the solo runs, the latest
    // ended jobs' windows (at start, and when a failed commit leaves memory behind the store).
    void load();

    struct ElapsedCounts {
        std::int64_t used = 0;
        std::map<std::string, std::int64_t> left_out;  // failed, too_short, no_solo, alone, several_gpus
    };
    // Since colocd started, the stored jobs it reloaded included.
    ElapsedCounts elapsed_counts() const;
    // Status lines (flat keys): what the elapsed-time learning used and left out.
    void status(proto::json& status) const;

private:
    void load_learned_params();
    void load_solo_runs();
    void load_ended_runs();
    struct EndedJob {
        std::string gpu_type;
        model::EndedRun run;
    };
    // An ended job's run from its stored row and co-location intervals (read once per job).
    std::optional<EndedJob> ended_run(const JobRow& job, const std::vector<ColocationRow>& shared);
    model::ElapsedWindow& elapsed_window(const std::string& gpu_type);
    void learn_from_ended(const JobRow& job, const std::vector<ColocationRow>& shared);
    void record_solo_iter_time(const JobRow& job, double iter_time_s, std::int64_t now);
    void record_solo_runtime(const JobRow& job, const std::vector<ColocationRow>& shared, std::int64_t now);

    State& state_;
    const Access& access_;
    std::map<std::string, model::ElapsedWindow> elapsed_;  // per GPU type
};

}  // namespace coloc::daemon
