// Measurement files, the Gavel conversion and the cross-validation behind bench/model-accuracy.
#include <doctest/doctest.h>

#include <sstream>

#include "model/io/gavel_json.hpp"
#include "model/io/measurements_csv.hpp"
#include "model/measurements.hpp"
#include "model/validation.hpp"

using namespace coloc::model;
using namespace coloc::model::io;

namespace {
std::string error_of(const std::string& csv) {
    std::istringstream in(csv);
    try {
        parse_measurements_csv(in, "m.csv");
    } catch (const MeasurementError& e) {
        return e.what();
    }
    return "";
}
const char* kHeader = "job,family,batch_size,gpu_type,neighbour,where,throughput\n";
}  // namespace

TEST_CASE("measurement CSV: solo and pair rows, normalised into a catalogue") {
    std::istringstream in(std::string("# a comment\n") + kHeader +
                          "a,resnet,32,v100,,,10\n"
                          "b,lm,20,v100,,,40\n"
                          "a,,,v100,b,gpu,6\n"
                          "\"b\",,,v100,a,,10\n"
                          "a,,,v100,b,node,9\n");
    const Measurements m = parse_measurements_csv(in, "m.csv");
    CHECK(m.solo.size() == 2);
    CHECK(m.pairs.size() == 3);
    CHECK(m.pairs[1].where == Sharing::Gpu);
    CHECK(m.pairs[2].where == Sharing::Node);
    const ProfileCatalogue cat = catalogue_from(m);
    REQUIRE(cat.find("a"));
    CHECK(cat.find("a")->iter_time_s == doctest::Approx(0.1));
    CHECK(cat.find("a")->family == "resnet");
    REQUIRE(cat.pairs().size() == 2);  // the node row is not a same-GPU pair
    CHECK(cat.pairs()[0].speed == doctest::Approx(0.6));
    CHECK(cat.pairs()[1].speed == doctest::Approx(0.25));
}

TEST_CASE("measurement CSV errors carry line numbers") {
    CHECK(error_of("job,x\n") ==
          "m.csv:1: expected the header job,family,batch_size,gpu_type,neighbour,where,throughput");
    CHECK(error_of(std::string(kHeader) + "a,,,v100,,,fast\n") ==
          "m.csv:2: column throughput: expected a non-negative number, got 'fast'");
    CHECK(error_of(std::string(kHeader) + "\na,,,v100,b,rack,1\n") ==
          "m.csv:3: column where: expected gpu, island, switch, node or link, got 'rack'");
    CHECK(error_of(std::string(kHeader) + "a,,v100,,1\n") == "m.csv:2: expected 7 fields, got 5");
    CHECK(error_of(std::string(kHeader) + "\"a,,,v100,,,1\n") == "m.csv:2: unterminated quote");
    CHECK(error_of("") == "m.csv:0: no header line");
    std::istringstream orphan(std::string(kHeader) + "a,,,v100,,,1\nz,,,v100,a,gpu,1\n");
    CHECK_THROWS_WITH(catalogue_from(parse_measurements_csv(orphan, "m.csv")),
                      "m.csv:3: job 'z' has no solo measurement");
}

TEST_CASE("Gavel's JSON: scale factor 1 only, could-not-co-run pairs left out") {
    const Measurements m = measurements_from_gavel_json(R"JSON({
      "v100": {
        "('ResNet-18 (batch size 16)', 1)": {"null": 30.0,
            "('A3C', 1)": [15.0, 3.0], "('LM (batch size 5)', 1)": [0.0, 0.0]},
        "('ResNet-18 (batch size 16)', 2)": {"null": 55.0},
        "('A3C', 1)": {"null": 7.0, "('ResNet-18 (batch size 16)', 1)": [3.0, 15.0]}
      },
      "v100_unconsolidated": {"('A3C', 1)": {"null": 1.0}}
    })JSON",
                                                        "g.json");
    CHECK(m.solo.size() == 2);
    REQUIRE(m.pairs.size() == 2);
    // Object keys come sorted: A3C first.
    CHECK(m.pairs[0].job == "a3c");
    CHECK(m.pairs[0].throughput == 3.0);
    CHECK(m.pairs[1].job == "resnet18-b16");
    CHECK(m.pairs[1].neighbour == "a3c");
    CHECK(m.pairs[1].throughput == 15.0);
    CHECK(m.solo[1].family == "resnet18");
    CHECK(m.solo[1].batch_size == 16);
    CHECK(m.solo[1].throughput == 30.0);
    CHECK(gavel_job_name("Recommendation (batch size 512)").name == "recommendation-b512");
    CHECK_THROWS(measurements_from_gavel_json("{", "bad.json"));
}

TEST_CASE("on Gavel's K80 pairs, unseen job types beat the nearest same-family type") {
    const ProfileCatalogue cat = catalogue_from(read_measurements_csv("data/gavel/measurements.csv"));
    const GpuPairData d = gpu_pair_data(cat, "k80");
    CHECK(d.types.size() == 26);
    const CvScores loto = leave_one_type_out(d, GpuShareParams{});
    CHECK(loto.coloc.value() < loto.baseline.value());
    CHECK(loto.coloc.value() < 0.045);
    CHECK(loto.coloc.value() < loto.median.value());
}
