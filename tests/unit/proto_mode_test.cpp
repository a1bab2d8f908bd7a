#include <doctest/doctest.h>

#include "proto/mode.hpp"

using coloc::proto::decide_mode;
using coloc::proto::GpuMode;

TEST_CASE("mode decision: the mode asked for, then the site's, then Slurm's GPUs, then bind slots") {
    CHECK(decide_mode({.asked = GpuMode::Observe, .site = GpuMode::Bind, .slurm_named_gpus = true}) ==
          GpuMode::Observe);
    CHECK(decide_mode({.site = GpuMode::Observe, .slurm_named_gpus = true, .bind_slots = true}) == GpuMode::Observe);
    CHECK(decide_mode({.slurm_named_gpus = true, .bind_slots = true}) == GpuMode::Narrow);
    CHECK(decide_mode({.bind_slots = true, .otherwise = GpuMode::Observe}) == GpuMode::Bind);
    CHECK(decide_mode({.otherwise = GpuMode::Observe}) == GpuMode::Observe);
    CHECK(decide_mode({}) == GpuMode::Narrow);  // colocd.yaml's default when it names none
}
