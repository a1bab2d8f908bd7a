// The data files coloc carries (data/README.md): what is built in is data/ as read from disk,
// the tables agree with each other, and their reader names the line of a bad row.
#include <doctest/doctest.h>

#include <cmath>
#include <fstream>
#include <map>
#include <sstream>
#include <tuple>

#include "model/io/gavel_json.hpp"
#include "model/io/measurements_csv.hpp"
#include "replay/demo.hpp"
#include "replay/gavel_throughputs.hpp"
#include "replay/readers.hpp"
#include "tests/unit/test_env.hpp"

using namespace coloc;
using namespace coloc::replay;

namespace {
std::string file_text(const std::string& path) {
    std::ifstream in(path);
    REQUIRE_MESSAGE(in, path << " not found (the unit tests run from the repository root)");
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

std::string solo_error(const std::string& csv) {
    std::istringstream in(csv);
    try {
        parse_gavel_solo_csv(in, "s.csv");
    } catch (const std::exception& e) {
        return e.what();
    }
    return "";
}
}  // namespace

TEST_CASE("the built-in Gavel tables are data/gavel/solo.csv and pairs.csv, every double as written") {
    std::ifstream solo_file("data/gavel/solo.csv"), pairs_file("data/gavel/pairs.csv");
    REQUIRE(solo_file);
    REQUIRE(pairs_file);
    const auto solo = parse_gavel_solo_csv(solo_file, "data/gavel/solo.csv");
    const auto pairs = parse_gavel_pairs_csv(pairs_file, "data/gavel/pairs.csv");
    const auto& built_solo = gavel_solo_throughputs();
    const auto& built_pairs = gavel_pair_speeds();
    REQUIRE(built_solo.size() == 83);  // 26 job types at the scale factors Gavel measured
    REQUIRE(built_pairs.size() == 2028);
    REQUIRE(solo.size() == built_solo.size());
    REQUIRE(pairs.size() == built_pairs.size());
    for (std::size_t i = 0; i < solo.size(); ++i) {
        CHECK(solo[i].job_type == built_solo[i].job_type);
        CHECK(solo[i].scale_factor == built_solo[i].scale_factor);
        CHECK(solo[i].k80 == built_solo[i].k80);
        CHECK(solo[i].p100 == built_solo[i].p100);
        CHECK(solo[i].v100 == built_solo[i].v100);
    }
    for (std::size_t i = 0; i < pairs.size(); ++i)
        CHECK(std::tie(pairs[i].gpu_type, pairs[i].job, pairs[i].neighbour, pairs[i].speed) ==
              std::tie(built_pairs[i].gpu_type, built_pairs[i].job, built_pairs[i].neighbour, built_pairs[i].speed));
    // Shortest round-trip text, as Gavel's JSON has it, gives back the same double.
    CHECK(gavel_solo_throughput("A3C", 1, "k80") == 3.4387678290723933);
    CHECK(gavel_solo_throughput("LM (batch size 5)", 8, "v100") == 698.773292956699);
    CHECK(gavel_solo_throughput("ResNet-50 (batch size 128)", 2, "k80") == 0);
    CHECK(built_pairs.front().speed == 0.529682);
}

TEST_CASE("the built-in catalogue agrees with data/gavel/measurements.csv") {
    std::istringstream in(file_text("data/gavel/measurements.csv"));
    const model::Measurements file = model::io::parse_measurements_csv(in, "data/gavel/measurements.csv");
    const model::Measurements built = gavel_measurements();
    REQUIRE(built.solo.size() == file.solo.size());
    REQUIRE(built.pairs.size() == file.pairs.size());
    std::map<std::tuple<std::string, std::string>, double> solo;
    for (const auto& s : file.solo) solo[{s.job, s.gpu_type}] = s.throughput;
    for (const auto& s : built.solo) CHECK(std::abs(s.throughput / solo.at({s.job, s.gpu_type}) - 1) < 1e-9);
    // Pair speeds carry 6 significant digits: a throughput beside a neighbour within 1e-5 of the file's.
    std::map<std::tuple<std::string, std::string, std::string>, double> pairs;
    for (const auto& p : file.pairs) pairs[{p.job, p.neighbour, p.gpu_type}] = p.throughput;
    for (const auto& p : built.pairs)
        CHECK(std::abs(p.throughput / pairs.at({p.job, p.neighbour, p.gpu_type}) - 1) < 1e-5);
}

TEST_CASE("the built-in demo trace is data/demo-trace.jsonl, read by the coloc-history reader") {
    CHECK(std::string(demo_trace_text()) == file_text("data/demo-trace.jsonl"));
    std::istringstream in(demo_trace_text());
    const Trace t = read_trace(in, TraceFormat::ColocHistory, "<built-in demo trace>");
    CHECK(t.jobs.size() == 300);
    CHECK(t.bad == 0);
}

TEST_CASE("Gavel table files: the header, the field count and the numbers are checked, with the line") {
    const std::string header = "# comment\njob_type,scale_factor,k80,p100,v100\n";
    CHECK(solo_error(header + "A3C,1,1.5,2,0\n").empty());
    CHECK(solo_error("job,scale_factor,k80,p100,v100\n").find("s.csv:1: expected the header") == 0);
    CHECK(solo_error(header + "A3C,1,1.5,2\n") == "s.csv:3: expected 5 fields, got 4");
    CHECK(solo_error(header + "A3C,1,1.5x,2,0\n") == "s.csv:3: expected a non-negative number, got '1.5x'");
    CHECK(solo_error(header + "A3C,0,1,2,0\n") == "s.csv:3: bad scale factor '0'");
    CHECK(solo_error("# nothing\n") == "s.csv:1: no header line");
    std::istringstream pairs("gpu_type,job,neighbour,speed\nk80,a,b,-1\n");
    CHECK_THROWS_WITH(parse_gavel_pairs_csv(pairs, "p.csv"), "p.csv:2: expected a non-negative number, got '-1'");
}

TEST_CASE("data/gavel/measurements.csv holds the rows model::io converts from Gavel's JSON in ../shared") {
    const std::string json = coloc::test::shared_path("data/gavel/simulation_throughputs.json");
    const bool found = std::ifstream(json).is_open();
    REQUIRE_MESSAGE(found, json << " not found: put the public datasets in ../shared beside the clone, or name "
                                   "their folder in COLOC_SHARED_DIR");
    std::ostringstream converted;
    model::io::write_measurements_csv(converted, model::io::read_gavel_json(json));
    std::istringstream shipped(file_text("data/gavel/measurements.csv"));
    std::string rows, line;
    while (std::getline(shipped, line))
        if (line.rfind('#', 0) != 0) rows += line + "\n";
    CHECK(rows == converted.str());
}
