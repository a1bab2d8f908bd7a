// The stored form of a decision's candidates: written compactly, read back by explain as the
// full list it always showed (and the full list decisions stored before, as it was).
#include <doctest/doctest.h>

#include <limits>

#include "daemon/service/alternatives.hpp"

using coloc::daemon::AlternativesWriter;
using coloc::daemon::explain_candidates;
using coloc::proto::json;

TEST_CASE("alternatives: explain reads back every candidate with its neighbours in full") {
    AlternativesWriter w;
    w.candidate(1.25, 0.5, 0.7);
    w.where("n0001", {0, 1});
    w.neighbour(7, "gpu", 1.1, 1.3);
    w.neighbour(8, "node", 1.0, 1.0000000000000002);
    w.candidate(1.0, 0.0, 0.1);
    w.where("n\"odd\"", {3});
    w.neighbour(7, "switch", 1.1, 1.2);
    w.neighbour(8, "node", 1.0, 1.0000000000000002);  // the same effect as above: stored once
    const std::string stored = w.finish();

    const json expected = json::array({
        {{"where", json::array({{{"node", "n0001"}, {"gpus", {0, 1}}}})},
         {"job_slowdown", 1.25},
         {"harm", 0.5},
         {"loss", 0.7},
         {"neighbours",
          json::array({{{"job_id", 7}, {"shares", "gpu"}, {"before", 1.1}, {"after", 1.3}},
                       {{"job_id", 8}, {"shares", "node"}, {"before", 1.0}, {"after", 1.0000000000000002}}})}},
        {{"where", json::array({{{"node", "n\"odd\""}, {"gpus", {3}}}})},
         {"job_slowdown", 1.0},
         {"harm", 0.0},
         {"loss", 0.1},
         {"neighbours",
          json::array({{{"job_id", 7}, {"shares", "switch"}, {"before", 1.1}, {"after", 1.2}},
                       {{"job_id", 8}, {"shares", "node"}, {"before", 1.0}, {"after", 1.0000000000000002}}})}},
    });
    const json got = explain_candidates(stored);
    CHECK(got == expected);
    CHECK(got.dump() == expected.dump());  // 1.0 stays a double, not the integer 1
    CHECK(json::parse(stored)["effects"].size() == 3);
    CHECK(w.finish() == R"({"effects":[],"candidates":[]})");  // empty again
}

TEST_CASE("alternatives: the full list stored before reads as it was; anything else as none") {
    const std::string before =
        R"([{"where":[{"node":"n1","gpus":[0]}],"job_slowdown":1.0,"harm":0.0,"loss":0.0,"neighbours":[]}])";
    CHECK(explain_candidates(before) == json::parse(before));
    CHECK(explain_candidates("not json") == json::array());
    CHECK(explain_candidates(R"({"effects":[[1,"gpu",1.0,1.0]],"candidates":[{"neighbours":[5]}]})")[0]["neighbours"] ==
          json::array());  // a position past the effects is dropped, not trusted
}

TEST_CASE("alternatives: numbers that are not finite are stored as null") {
    AlternativesWriter w;
    w.candidate(std::numeric_limits<double>::infinity(), std::numeric_limits<double>::quiet_NaN(), 2.0);
    CHECK(explain_candidates(w.finish())[0]["job_slowdown"].is_null());
}
