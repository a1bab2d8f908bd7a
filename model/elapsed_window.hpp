// The ended runs colocd learns pair delays from as jobs end (interval_regression.hpp): the
// usable ones, the latest `capacity` of them, so a refit's cost stays bounded, and how many were
// left out and why. A refit is due every `refit_every` usable runs, and once the window is large,
// when a tenth of it is new (see elapsed_window.cpp). Pure: colocd builds the runs
// from its store (daemon/service/elapsed.cpp) and hands the window to its model's learner.
#pragma once

#include <cstddef>
#include <vector>

#include "model/interval_regression.hpp"

namespace coloc::model {

struct ElapsedWindowOptions {
    IntervalOptions fit;
    std::size_t capacity = 1000;  // usable runs kept, the latest
    int refit_every = 10;         // usable runs between refits, at least (see above)
};

class ElapsedWindow {
public:
    explicit ElapsedWindow(ElapsedWindowOptions options = {}) : options_(options) {}

    // Takes one ended run, or counts it under why it cannot be used; true when a refit is due.
    bool add(EndedRun run);
    const std::vector<EndedRun>& runs() const { return runs_; }
    const LeftOut& left_out() const { return left_out_; }
    long used() const { return used_; }  // usable runs taken, including those the window dropped
    const ElapsedWindowOptions& options() const { return options_; }
    void clear() { *this = ElapsedWindow(options_); }

private:
    ElapsedWindowOptions options_;
    std::vector<EndedRun> runs_;
    LeftOut left_out_;
    long used_ = 0;
    long since_refit_ = 0;
};

}  // namespace coloc::model
