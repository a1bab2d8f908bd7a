// The replay's plots, rendered by gnuplot as SVG and PNG: the distributions (CDFs) of JCT, wait
// and slowdown per policy, busy GPUs, slots in use and shared GPUs over time, and (for coloc
// and coloc-nolearn) the model's error on the pairs formed over time. The data files
// and the gnuplot script stay beside them, so a plot can be redrawn or restyled.
#pragma once

#include <string>
#include <vector>

#include "replay/replay.hpp"
#include "replay/report.hpp"
#include "replay/workload.hpp"

namespace coloc::replay {

struct PlotFiles {
    std::vector<std::string> written;  // data, script and images, as paths
    std::string problem;               // why no image was rendered, empty when all were
};

// Writes into `dir` (which must exist); runs `gnuplot` (found on PATH) unless `render` is false.
// The titles name the trace, cluster, truth and load of `context`.
PlotFiles write_plots(const std::string& dir, const Workload& workload, const ReplayResult& result,
                      const ReplayContext& context, bool render = true);

}  // namespace coloc::replay
