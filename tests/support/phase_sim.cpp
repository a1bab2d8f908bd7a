#include "tests/support/phase_sim.hpp"

#include <algorithm>

namespace coloc::model {

namespace {
struct State {
    bool in_burst = true;
    double left = 0;  // work (burst) or time (compute) left in the current phase
    double iter_start = 0;
    int iterations = 0;
    double measured_time = 0;
    int measured = 0;
};
}  // namespace

SimResult simulate_link(std::span<const SimJob> jobs, double horizon_s, double dt_s, int warmup) {
    const std::size_t n = jobs.size();
    std::vector<State> st(n);
    for (std::size_t i = 0; i < n; ++i) {
        st[i].left = jobs[i].burst_s;
        st[i].iter_start = jobs[i].start_s;
    }
    for (double t = 0; t < horizon_s; t += dt_s) {
        int bursting = 0;
        for (std::size_t i = 0; i < n; ++i)
            if (t >= jobs[i].start_s && st[i].in_burst && jobs[i].burst_s > 0) ++bursting;
        const double rate = bursting > 0 ? 1.0 / bursting : 1.0;
        for (std::size_t i = 0; i < n; ++i) {
            State& s = st[i];
            if (t < jobs[i].start_s) continue;
            double step = dt_s;
            // A phase may end inside the step; the rest of the step goes to the next phase
            // at the rate of this step (the sharing set is re-evaluated next step).
            while (step > 1e-15) {
                if (s.in_burst) {
                    const double need = s.left / rate;
                    if (need > step) {
                        s.left -= step * rate;
                        step = 0;
                        break;
                    }
                    step -= need;
                    s.in_burst = false;
                    s.left = jobs[i].compute_s;
                } else {
                    if (s.left > step) {
                        s.left -= step;
                        step = 0;
                        break;
                    }
                    step -= s.left;
                    const double end = t + dt_s - step;
                    if (s.iterations >= warmup) {
                        s.measured_time += end - s.iter_start;
                        ++s.measured;
                    }
                    ++s.iterations;
                    s.iter_start = end;
                    s.in_burst = true;
                    s.left = jobs[i].burst_s;
                    if (jobs[i].burst_s <= 0 && jobs[i].compute_s <= 0) break;
                }
            }
        }
    }
    SimResult r;
    for (std::size_t i = 0; i < n; ++i) {
        const double solo = jobs[i].compute_s + jobs[i].burst_s;
        const double mean = st[i].measured > 0 ? st[i].measured_time / st[i].measured : solo;
        r.mean_iter_s.push_back(mean);
        r.slowdown.push_back(solo > 0 ? mean / solo : 1.0);
    }
    return r;
}

}  // namespace coloc::model
