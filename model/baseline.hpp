// The simplest model: a fixed cost per neighbour by the kind of sharing.
// Used as the fallback when no fitted model is configured and as a benchmark baseline.
#pragma once

#include "model/model.hpp"

namespace coloc::model {

class BaselineModel final : public InterferenceModel {
public:
    double slowdown(const JobProfile& job, std::span<const Neighbour> neighbours) const override;
    std::string name() const override { return "baseline"; }
};

}  // namespace coloc::model
