// colocctl probe's pure parts: the jobs it is given, the runs it plans, the means it takes from
// colocd's reports, and the CSV that `colocctl fit` reads back.
#include <doctest/doctest.h>

#include <cmath>
#include <sstream>

#include "ctl/probe_plan.hpp"
#include "ctl/probe_runs.hpp"
#include "model/io/measurements_csv.hpp"

using namespace coloc::ctl::probe;
using nlohmann::json;

namespace {
std::string error_of(const std::string& arg) {
    try {
        parse_job(arg);
    } catch (const std::invalid_argument& e) {
        return e.what();
    }
    return "";
}

std::vector<Job> three() { return {{"dense", "train --dense"}, {"light", "train --light"}, {"mid", "train --mid"}}; }
}  // namespace

TEST_CASE("probe: --job NAME=COMMAND keeps the command whole; bad ones are named with the reason") {
    const Job j = parse_job("resnet=python train.py --lr=0.1 --batch 64");
    CHECK(j.name == "resnet");
    CHECK(j.command == "python train.py --lr=0.1 --batch 64");
    CHECK(error_of("resnet") == "--job 'resnet': expected NAME=COMMAND");
    CHECK(error_of("=train") == "--job '=train': the name '' must be 1 to 100 letters, digits, '.', '_' or '-'");
    CHECK(error_of("a b=train").find("the name 'a b' must be") != std::string::npos);
    CHECK(error_of("a+b=train").find("the name 'a+b' must be") != std::string::npos);
    CHECK(error_of("resnet=  ") == "--job 'resnet=  ': the command is empty");
}

TEST_CASE("probe: jobs need a name each, once") {
    CHECK_NOTHROW(check_jobs(three()));
    CHECK_THROWS_WITH_AS(check_jobs({}), doctest::Contains("no job to probe"), std::invalid_argument);
    CHECK_THROWS_WITH_AS(check_jobs({{"a", "x"}, {"b", "y"}, {"a", "z"}}), "--job 'a' is given twice (jobs 1 and 3)",
                         std::invalid_argument);
}

TEST_CASE("probe: every job alone first, then each pair of distinct jobs, within --max-pairs") {
    const std::vector<Job> jobs = three();
    const std::vector<Run> all = plan_runs(jobs, -1);
    std::vector<std::string> labels;
    for (const Run& r : all) labels.push_back(r.label(jobs));
    CHECK(labels == std::vector<std::string>{"solo dense", "solo light", "solo mid", "pair dense+light",
                                             "pair dense+mid", "pair light+mid"});
    CHECK(plan_runs(jobs, 1).size() == 4);
    CHECK(plan_runs(jobs, 0).size() == 3);
    CHECK(plan_runs(jobs, 10).size() == 6);
    std::vector<Job> four = jobs;
    four.push_back({"heavy", "train --heavy"});
    CHECK(plan_runs(four, -1).size() == 10);  // 4 solo + 6 pairs
    CHECK(plan_runs({{"only", "x"}}, -1).size() == 1);
}

TEST_CASE("probe: reports count after the warm-up, and only those taken the way the run meant") {
    const json obs = json::parse(R"([
        {"iter_time_s": 9.0, "neighbours": []},
        {"iter_time_s": 1.0, "neighbours": []},
        {"iter_time_s": 2.0, "neighbours": [{"profile": "b", "where": "node"}]},
        {"iter_time_s": 3.0, "neighbours": [{"profile": "b", "where": "gpu"}]},
        {"iter_time_s": 5.0, "neighbours": [{"profile": "c", "where": "node"}, {"profile": "b", "where": "gpu"}]},
        {"iter_time_s": 0, "neighbours": []}
    ])");
    const std::vector<Report> reports = reports_from(obs);
    REQUIRE(reports.size() == 5);  // the one without a time is no report
    CHECK(!reports[2].beside_on_gpu);
    CHECK(reports[3].beside_on_gpu);
    CHECK(reports[4].beside_on_gpu);

    Mean solo;
    add_reports(solo, reports, 1, false);  // the 9 s warm-up left out
    CHECK(solo.count == 2);
    CHECK(solo.mean_s() == doctest::Approx(1.5));
    Mean pair;
    add_reports(pair, reports, 1, true);
    add_reports(pair, reports, 4, true);  // a second copy of the job, with a longer warm-up
    CHECK(pair.count == 3);
    CHECK(pair.mean_s() == doctest::Approx(13.0 / 3));
    CHECK(speed(solo, pair) == doctest::Approx(1.5 / (13.0 / 3)));
    CHECK(std::isnan(Mean{}.mean_s()));
    CHECK(reports_from(json()).empty());
}

TEST_CASE("probe: the CSV it writes is what colocctl fit reads, speeds as solo time over pair time") {
    const std::vector<Job> jobs = three();
    std::vector<Mean> solo = {{0.5, 10}, {0.2, 10}, {0, 0}};  // mid's solo run failed
    std::vector<PairResult> pairs = {{0, 1, {0.8, 10}, {0.25, 10}}, {0, 2, {1.0, 10}, {1.0, 10}}};
    const coloc::model::Measurements m = measurements_from(jobs, solo, pairs, "a100");
    REQUIRE(m.solo.size() == 2);  // no row for mid, nor for its pair
    REQUIRE(m.pairs.size() == 2);
    std::ostringstream csv;
    coloc::model::io::write_measurements_csv(csv, m);
    std::istringstream in(csv.str());
    const coloc::model::Measurements back = coloc::model::io::parse_measurements_csv(in, "probe.csv");
    REQUIRE(back.solo.size() == 2);
    CHECK(back.solo[0].job == "dense");
    CHECK(back.solo[0].gpu_type == "a100");
    CHECK(back.solo[0].throughput == doctest::Approx(20));  // 1 / 0.05 s
    REQUIRE(back.pairs.size() == 2);
    CHECK(back.pairs[0].job == "dense");
    CHECK(back.pairs[0].neighbour == "light");
    CHECK(back.pairs[0].where == coloc::model::Sharing::Gpu);
    CHECK(coloc::model::normalised_speed(back, back.pairs[0]) == doctest::Approx(0.05 / 0.08));
    CHECK(coloc::model::normalised_speed(back, back.pairs[1]) == doctest::Approx(0.02 / 0.025));
    CHECK(csv.str().rfind("job,family,batch_size,gpu_type,neighbour,where,throughput\n", 0) == 0);
}

TEST_CASE("probe: nvidia-smi samples become utilisations; the first sample and junk are left out") {
    const auto u = parse_nvidia_smi("5, 1\n80, 40\n[N/A], [N/A]\n90, 60\nNo devices were found\n");
    REQUIRE(u);
    CHECK(u->samples == 2);
    CHECK(u->sm == doctest::Approx(0.85));
    CHECK(u->mem == doctest::Approx(0.5));
    CHECK(!parse_nvidia_smi("nvidia-smi not found on n1, or no GPU given\n"));
    CHECK(!parse_nvidia_smi("70, 30\n"));  // one sample: the job starting
    CHECK(!parse_nvidia_smi(""));
}

TEST_CASE("probe: a job's script waits for the run's other jobs, stops at the budget, quotes the command") {
    Target t;
    t.seconds = 42;
    t.report_interval_s = 0.5;
    const std::string s = job_script(t, {"x", "echo 'it''s' \"$HOME\""}, "/tmp/b", 8, "/out/x.nvml");
    CHECK(s.find("-ge 8 ]") != std::string::npos);
    CHECK(s.find("export COLOC_REPORT_INTERVAL_S=0.5\n") != std::string::npos);
    CHECK(s.find("timeout -k 10 42 bash -c 'echo '\\''it'\\'''\\''s'\\'' \"$HOME\"'\n") != std::string::npos);
    CHECK(s.find("nvidia-smi --query-gpu=utilization.gpu,utilization.memory") != std::string::npos);
    CHECK(s.find("[ $rc = 124 ] && rc=0") != std::string::npos);
    CHECK(job_script(t, {"x", "y"}, "/tmp/b", 1, "").find("nvidia-smi") == std::string::npos);
}
