#include <doctest/doctest.h>

#include "spank/gpu_env.hpp"

using namespace coloc::spank;

TEST_CASE("spank: GPU lists from the environment") {
    CHECK(parse_index_list("0,2-3") == std::vector<int>{0, 2, 3});
    CHECK(parse_index_list("").empty());
    CHECK(parse_index_list("a").empty());
    CHECK(parse_index_list("3-1").empty());
    CHECK(parse_index_list("1,,2").empty());
    CHECK(parse_index_list("4096").empty());
    // The step's GPUs win over the job's, which win over CUDA_VISIBLE_DEVICES.
    CHECK(slurm_gpus_from("1", "0,1,2", "0,1,2", "") == std::vector<int>{1});
    CHECK(slurm_gpus_from("", "0,1,2", "0", "") == std::vector<int>{0, 1, 2});
    CHECK(slurm_gpus_from("", "", "3", "") == std::vector<int>{3});
    CHECK(slurm_gpus_from("", "", "", "").empty());
    // An srun step inside a bind job inherits the batch step's choice: not Slurm's GPUs.
    CHECK(slurm_gpus_from("", "", "0,1", "local").empty());
    CHECK(slurm_gpus_from("", "", "2", "41").empty());
    CHECK(slurm_gpus_from("1", "0,1", "1", "41") == std::vector<int>{1});
}

TEST_CASE("spank: CUDA_VISIBLE_DEVICES for the chosen GPUs") {
    CHECK(visible_devices_for({2, 3}, {}, {}) == "2,3");          // bind: physical indices
    CHECK(visible_devices_for({6}, {4, 6}, {4, 6}) == "6");       // unconstrained narrow
    CHECK(visible_devices_for({6}, {4, 6}, {0, 1}) == "1");       // constrained: renumbered
    CHECK(visible_devices_for({6, 4}, {4, 6}, {0, 1}) == "1,0");  // colocd's order kept
    CHECK(intersect({3, 1, 7}, {1, 2, 3}) == std::vector<int>{3, 1});
}

TEST_CASE("spank: exit codes from wait statuses") {
    CHECK(exit_code_from_wait_status(0) == 0);
    CHECK(exit_code_from_wait_status(3 << 8) == 3);
    CHECK(exit_code_from_wait_status(9) == 137);  // killed by SIGKILL
}
