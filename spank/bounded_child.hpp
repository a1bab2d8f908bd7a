// Runs work that talks to the outside world (munged, colocd, slurmctld) in a forked child that
// is killed at a deadline. None of those calls can be trusted to honour a deadline on its own
// (libmunge retries for seconds, slurm_load_job waits MessageTimeout), and a launch must never
// wait longer than the plugin's deadline. The child also keeps ZeroMQ contexts and any crash
// out of slurmstepd.
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <vector>

namespace coloc::spank {

using Clock = std::chrono::steady_clock;

struct ChildResult {
    std::vector<std::string> lines;  // what the child emitted, complete lines only
    bool finished = false;           // the child exited on its own, with status 0
    bool killed = false;             // at the deadline (or when its output ran over)
    std::string failure;             // why not: "killed at the deadline", "died of signal 11", ...
};

using Emit = std::function<void(const std::string& line)>;

// Forks; the child runs `work(emit)` and exits with _exit (no atexit handlers, no destructors of
// the parent's objects). The parent collects emitted lines until the child exits or `kill_at`
// passes, then kills (SIGKILL) and reaps it. Never throws.
ChildResult run_in_child(Clock::time_point kill_at, const std::function<void(const Emit&)>& work);

// Fire and forget: runs `work` in a child that SIGALRM ends after `limit_ms` and returns at once,
// so that what `work` waits for never delays the caller. The caller's process must reap children
// it does not know (slurmstepd does). Returns why it could not start, or an empty string.
std::string run_detached(int limit_ms, const std::function<void()>& work);

}  // namespace coloc::spank
