#include "model/elapsed_window.hpp"

#include <algorithm>

namespace coloc::model {

bool ElapsedWindow::add(EndedRun run) {
    if (!usable_run(run, options_.fit, left_out_)) return false;
    ++used_;
    runs_.push_back(std::move(run));
    if (runs_.size() > std::max<std::size_t>(options_.capacity, 1)) runs_.erase(runs_.begin());
    if (++since_refit_ < std::max(options_.refit_every, 1)) return false;
    since_refit_ = 0;
    return true;
}

}  // namespace coloc::model
