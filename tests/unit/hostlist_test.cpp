#include <doctest/doctest.h>

#include "slurm/hostlist.hpp"

using coloc::slurm::expand_hostlist;

TEST_CASE("hostlists expand as Slurm writes them") {
    CHECK(expand_hostlist("n[1-3,7]") == std::vector<std::string>{"n1", "n2", "n3", "n7"});
    CHECK(expand_hostlist("gpu[001-002],login") == std::vector<std::string>{"gpu001", "gpu002", "login"});
    CHECK(expand_hostlist("n[1-50000]")->size() == 50000);
}

TEST_CASE("malformed or enormous hostlists are refused before libslurm sees them") {
    // "gpu[001-01L]" made libslurm leak (found by tests/fuzz config); the others must not
    // reach it either.
    for (const char* bad : {"gpu[001-01L]", "n[5-1]", "n[", "n]", "n[]", "n[1,]", "n[-2]", "n[1-2", "n[1-65537]",
                            "n[1-999999999999]", "n[1-400]x[1-400]", "n[[1]]"}) {
        CAPTURE(bad);
        CHECK_FALSE(expand_hostlist(bad).has_value());
    }
}
