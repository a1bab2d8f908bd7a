#include "model/elapsed_window.hpp"

#include <algorithm>

namespace coloc::model {

namespace {

// A refit costs the whole window; runs fewer than this share of it move the fit little, so a
// full window waits for that many new runs (a young one still refits every refit_every).
constexpr double kNewShare = 0.1;

}  // namespace

bool ElapsedWindow::add(EndedRun run) {
    if (!usable_run(run, options_.fit, left_out_)) return false;
    ++used_;
    runs_.push_back(std::move(run));
    if (runs_.size() > std::max<std::size_t>(options_.capacity, 1)) runs_.erase(runs_.begin());
    const long due = std::max<long>(std::max(options_.refit_every, 1),
                                    static_cast<long>(kNewShare * static_cast<double>(runs_.size())));
    if (++since_refit_ < due) return false;
    since_refit_ = 0;
    return true;
}

}  // namespace coloc::model
