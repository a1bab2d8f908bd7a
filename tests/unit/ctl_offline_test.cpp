// colocctl's offline commands (predict, fit, replay) as a user meets them: what they say when a
// file or an option is wrong.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <vector>

#include "ctl/cli.hpp"
#include "model/catalogue.hpp"
#include "model/io/profiles_yaml.hpp"
#include "test_env.hpp"

namespace {

struct Run {
    int rc = 0;
    std::string out, err;
};

// Runs `colocctl ARGS...` in this process, capturing what it prints.
Run colocctl(std::vector<std::string> args) {
    args.insert(args.begin(), "colocctl");
    std::vector<const char*> argv;
    for (const std::string& a : args) argv.push_back(a.c_str());
    std::ostringstream out, err;
    auto* old_out = std::cout.rdbuf(out.rdbuf());
    auto* old_err = std::cerr.rdbuf(err.rdbuf());
    Run r;
    try {
        r.rc = coloc::ctl::colocctl_main(static_cast<int>(argv.size()), argv.data());
    } catch (...) {
        std::cout.rdbuf(old_out);
        std::cerr.rdbuf(old_err);
        throw;
    }
    std::cout.rdbuf(old_out);
    std::cerr.rdbuf(old_err);
    r.out = out.str();
    r.err = err.str();
    return r;
}

std::string write(const std::string& name, const std::string& text) {
    const std::string path = coloc::test::scratch(name);
    std::ofstream(path) << text;
    return path;
}

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

const char* kProfiles = "profiles:\n  - { name: a, sm_util: 0.5 }\n  - { name: b, sm_util: 0.3 }\n";
const char* kHeader = "job,family,batch_size,gpu_type,neighbour,where,throughput\n";

// A history of one job of profile a: submitted at 0, ran 100 s on n1's GPU 0.
const char* kOneJob =
    "{\"format\":\"coloc-history\",\"version\":1}\n"
    "{\"job_id\":1,\"profile\":\"a\",\"user\":\"ann\",\"state\":\"ended\",\"submit\":0,\"start\":0,\"end\":100,"
    "\"time_limit_s\":200,\"exit_status\":0,\"placements\":[{\"node\":\"n1\",\"gpus\":[0]}],\"colocations\":[]}\n";
// The same job on two nodes: admission gates it (a standing offer is for one node).
const char* kTwoNodeJob =
    "{\"format\":\"coloc-history\",\"version\":1}\n"
    "{\"job_id\":1,\"profile\":\"a\",\"user\":\"ann\",\"state\":\"ended\",\"submit\":0,\"start\":0,\"end\":100,"
    "\"time_limit_s\":200,\"exit_status\":0,\"placements\":[{\"node\":\"n1\",\"gpus\":[0]},{\"node\":\"n2\",\"gpus\":["
    "0]}],"
    "\"colocations\":[]}\n";

// The mean wait of the oracle and exclusive in `colocctl replay ARGS`.
std::map<std::string, double> replayed_waits(std::vector<std::string> args) {
    args.insert(args.begin(), "replay");
    args.insert(args.end(), {"--policy", "oracle,exclusive", "--json", "--no-progress"});
    Run r = colocctl(args);
    REQUIRE(r.rc == 0);
    const nlohmann::json summary = nlohmann::json::parse(r.out);  // outlives the loop
    std::map<std::string, double> wait;
    for (const auto& p : summary["policies"]) wait[p["policy"].get<std::string>()] = p["mean_wait_s"].get<double>();
    return wait;
}

}  // namespace

TEST_CASE("predict: a directory or a missing file as --pairs is an error naming the path and why") {
    const std::string profiles = write("p.yaml", kProfiles);
    const std::string dir = coloc::test::scratch("pairs-dir");
    std::filesystem::create_directories(dir);
    Run r = colocctl({"predict", "--profiles", profiles, "--pairs", dir});
    CHECK(r.rc == 1);
    CHECK(r.out.empty());
    CHECK(r.err == "colocctl: error: " + dir + ": is a directory, not a file\n");

    r = colocctl({"predict", "--profiles", profiles, "--pairs", dir + "/none.csv"});
    CHECK(r.rc == 1);
    CHECK(r.err == "colocctl: error: " + dir + "/none.csv: cannot open: No such file or directory\n");
    r = colocctl({"predict", "--profiles", dir + "/none.yaml", "--pairs", dir});
    CHECK(r.err == "colocctl: error: " + dir + "/none.yaml: cannot open: No such file or directory\n");

    // Line errors read FILE:LINE: reason, as everywhere.
    const std::string pairs = write("pairs.csv", "a,b,where\na,zz,gpu\n");
    r = colocctl({"predict", "--profiles", profiles, "--pairs", pairs});
    CHECK(r.err == "colocctl: error: " + pairs + ":2: unknown profile 'zz'\n");
    std::filesystem::remove_all(dir);
}

TEST_CASE("one rule for pair speeds: fit rejects at input what predict would reject in the catalogue") {
    CHECK(coloc::model::pair_speed_problem(0.7).empty());
    CHECK(coloc::model::pair_speed_problem(1.5).empty());
    CHECK(coloc::model::pair_speed_problem(6) == "speed 6 out of range (0, 1.5]");
    CHECK(coloc::model::pair_speed_problem(0) == "speed 0 out of range (0, 1.5]");
    CHECK(coloc::model::pair_speed_problem(-1) == "speed -1 out of range (0, 1.5]");

    // Solo 10, beside b 60: speed 6.
    const std::string m =
        write("m.csv", std::string(kHeader) + "a,,,v100,,,10\nb,,,v100,,,10\n# c\n\na,,,v100,b,gpu,60\n");
    const std::string out = coloc::test::scratch("fit.yaml");
    Run r = colocctl({"fit", "--measurements", m, "--out", out});
    CHECK(r.rc == 1);
    CHECK(r.err == "colocctl: error: " + m + ":6: job 'a' beside 'b' on v100: speed 6 out of range (0, 1.5] " +
                       "(its throughput over its solo throughput)\n");
    CHECK(!std::filesystem::exists(out));

    // The catalogue reader says the same of the same speed.
    const std::string cat = write("c.yaml", std::string(kProfiles) + "pairs:\n  v100:\n    a: { b: 6.0 }\n");
    try {
        coloc::model::io::load_profiles_yaml(cat);
        FAIL("no error");
    } catch (const std::exception& e) {
        CHECK(std::string(e.what()) == cat + ":6: key 'pairs.v100.a.b': speed 6 out of range (0, 1.5]");
    }
}

TEST_CASE("fit: the parameters carry the GPU type of the data, and predict reads what fit wrote") {
    const std::string m = write("a100.csv", std::string(kHeader) + "a,x,,a100,,,10\nb,y,,a100,,,20\n" +
                                                "a,,,a100,b,gpu,7\nb,,,a100,a,gpu,12\n");
    const std::string out = coloc::test::scratch("fit.yaml"), params = coloc::test::scratch("params.json");
    Run r = colocctl({"fit", "--measurements", m, "--out", out, "--params-out", params});
    REQUIRE(r.rc == 0);
    CHECK(has(r.out, "parameters for a100"));
    std::ifstream in(params);
    CHECK(nlohmann::json::parse(in).at("gpu_type") == "a100");

    const std::string pairs = write("pairs.csv", "a,b,gpu\n");
    r = colocctl({"predict", "--profiles", out, "--pairs", pairs, "--params", params, "--gpu-type", "a100"});
    CHECK(r.rc == 0);
    CHECK(r.err.empty());

    // A GPU type the data does not have is the option's fault.
    r = colocctl({"fit", "--measurements", m, "--out", out, "--gpu-type", "v100"});
    CHECK(r.rc == 1);
    CHECK(r.err == "colocctl: error: --gpu-type 'v100': " + m + " has no measurement on it (it has a100)\n");

    // Data on several types: the user says which the parameters are for.
    const std::string two = write("two.csv", std::string(kHeader) + "a,x,,a100,,,10\na,x,,v100,,,8\n");
    r = colocctl({"fit", "--measurements", two, "--out", out});
    CHECK(r.rc == 1);
    CHECK(r.err == "colocctl: error: " + two + " holds measurements on a100, v100: give --gpu-type, the GPU type " +
                       "of the nodes the parameters are for\n");
    r = colocctl({"fit", "--measurements", two, "--out", out, "--gpu-type", "v100", "--params-out", params});
    CHECK(r.rc == 0);
    CHECK(has(r.out, "parameters for v100"));

    r = colocctl({"fit", "--measurements", m, "--out", coloc::test::scratch("none") + "/fit.yaml"});
    CHECK(r.rc == 1);
    CHECK(has(r.err, "/fit.yaml: cannot open for writing: No such file or directory\n"));
}

TEST_CASE("command-line errors carry the colocctl: error: prefix") {
    Run r = colocctl({"replay", "--load", "-1"});
    CHECK(r.rc == 2);
    CHECK(r.err.rfind("colocctl: error: --load", 0) == 0);
    CHECK(has(r.err, "expected a number above 0, got '-1'"));
    r = colocctl({"predict", "--profiles", "x"});
    CHECK(r.rc == 2);
    CHECK(r.err.rfind("colocctl: error: --pairs is required", 0) == 0);
    r = colocctl({"fit", "--bogus"});
    CHECK(r.rc == 2);
    CHECK(r.err.rfind("colocctl: error: ", 0) == 0);
    r = colocctl({"--help"});
    CHECK(r.rc == 0);
}

TEST_CASE("replay: a catalogue named by colocd.yaml is blamed on the config's profiles key") {
    const std::string config = write("colocd.yaml",
                                     "profiles: /nonexistent/profiles.yaml\n"
                                     "node_types:\n  quad: { gpus: 4 }\n"
                                     "nodes:\n  - { names: \"n[1-2]\", type: quad }\n");
    Run r = colocctl({"replay", "--config", config, "--no-progress"});
    CHECK(r.rc == 1);
    CHECK(r.err == "colocctl: error: " + config +
                       ": key 'profiles' (or give --profiles): /nonexistent/profiles.yaml: cannot open: "
                       "No such file or directory\n");
}

TEST_CASE("replay: an --out that cannot be made says why") {
    Run r = colocctl({"replay", "--out", "/dev/null/x", "--no-progress", "--no-plots"});
    CHECK(r.rc == 1);
    CHECK(has(r.err, "colocctl: error: /dev/null/x: cannot create the directory: Not a directory\n"));
}

TEST_CASE("replay: a GPU type without measurements is blamed on --gpu-type, not the trace") {
    // The demo trace judged by Gavel's pairs, which has none on a100.
    Run r = colocctl({"replay", "--gpu-type", "a100", "--no-progress"});
    CHECK(r.rc == 1);
    CHECK(r.err ==
          "colocctl: error: --gpu-type 'a100': Gavel measured k80, p100 and v100 only (--truth measured:gavel)\n");

    // A Gavel trace takes its run times from Gavel's throughputs.
    const std::string trace = write("gavel.trace", "A3C\tcmd\t--steps\t0\t500\t0.0\t1\n");
    r = colocctl({"replay", trace, "--gpu-type", "a100", "--no-progress"});
    CHECK(r.rc == 1);
    CHECK(r.err == "colocctl: error: --gpu-type 'a100': Gavel measured k80, p100 and v100 only, and the jobs of " +
                       trace + " take their run times from Gavel's throughputs\n");

    // Other traces carry their run times: any GPU type will do for them.
    const std::string hist = write("h.jsonl", "{\"format\":\"coloc-history\",\"version\":1}\n");
    r = colocctl({"replay", hist, "--gpu-type", "a100", "--no-progress"});
    CHECK(!has(r.err, "--gpu-type"));
}

TEST_CASE("replay: a gated job starts half of admission's watch after its submission, half an interval unwatched") {
    const std::string hist = write("two-node.jsonl", kTwoNodeJob);
    const std::string profiles = write("ab.yaml", kProfiles);
    const auto wait_with = [&](const std::string& admission) {
        const std::string config = write("gate.yaml",
                                         "node_types:\n  quad: { gpus: 4, slots_per_gpu: 2 }\n"
                                         "nodes:\n  - { names: \"n[1-2]\", type: quad }\n"
                                         "admission: " +
                                             admission + "\n");
        auto wait = replayed_waits({hist, "--config", config, "--profiles", profiles});
        CHECK(wait["exclusive"] == 0);  // not gated
        return wait["oracle"];
    };
    CHECK(wait_with("{ interval_s: 4, watch_ms: 500 }") == doctest::Approx(0.25));
    CHECK(wait_with("{ interval_s: 4, watch_ms: 0 }") == doctest::Approx(2));
    CHECK(wait_with("off") == 0);
    // A one-node job on an idle cluster takes colocd's standing offer: it is not gated.
    const std::string one = write("one.jsonl", kOneJob);
    const std::string config = write("gate.yaml",
                                     "node_types:\n  quad: { gpus: 4, slots_per_gpu: 2 }\n"
                                     "nodes:\n  - { names: \"n[1-2]\", type: quad }\n"
                                     "admission: { interval_s: 4, watch_ms: 0 }\n");
    CHECK(replayed_waits({one, "--config", config, "--profiles", profiles})["oracle"] == 0);
    // A colocd that writes none (offers_file "") gates it.
    const std::string none = write("gate.yaml",
                                   "node_types:\n  quad: { gpus: 4, slots_per_gpu: 2 }\n"
                                   "nodes:\n  - { names: \"n[1-2]\", type: quad }\n"
                                   "admission: { interval_s: 4, watch_ms: 0, offers_file: '' }\n");
    CHECK(replayed_waits({one, "--config", none, "--profiles", profiles})["oracle"] == doctest::Approx(2));
}

TEST_CASE("replay --pass-interval: a job that can start waits half an interval for Slurm's next pass") {
    const std::string hist = write("pass.jsonl", kTwoNodeJob);
    const std::string profiles = write("ab.yaml", kProfiles);
    const std::string config = write("pass.yaml",
                                     "node_types:\n  quad: { gpus: 4, slots_per_gpu: 2 }\n"
                                     "nodes:\n  - { names: \"n[1-2]\", type: quad }\n"
                                     "admission: { interval_s: 4, watch_ms: 500 }\n");
    const auto waits = [&](const std::string& interval) {
        return replayed_waits({hist, "--config", config, "--profiles", profiles, "--pass-interval", interval});
    };
    auto w = waits("0");
    CHECK(w["exclusive"] == 0);
    CHECK(w["oracle"] == doctest::Approx(0.25));  // admission's release only
    w = waits("4");                               // 2 s after it could start: admission's release comes first
    CHECK(w["exclusive"] == doctest::Approx(2));
    CHECK(w["oracle"] == doctest::Approx(2.25));
    Run bad = colocctl({"replay", hist, "--pass-interval", "-1", "--no-progress"});
    CHECK(bad.rc == 2);
    CHECK(bad.err.rfind("colocctl: error: --pass-interval", 0) == 0);
}

TEST_CASE("fit --history: ended jobs' elapsed times teach the model a pair, written as learned from elapsed times") {
    // a alone takes 1000 s; a beside b on one GPU for its whole run takes 2000 s: speed 0.5.
    std::string lines = "{\"format\":\"coloc-history\",\"version\":1}\n";
    auto job = [&](int id, const char* profile, int start, int end, const std::string& colocations,
                   const char* state = "ended") {
        lines += "{\"job_id\":" + std::to_string(id) + ",\"profile\":\"" + profile +
                 "\",\"user\":\"ann\",\"state\":\"" + state + "\",\"start\":" + std::to_string(start) +
                 ",\"end\":" + std::to_string(end) + ",\"exit_status\":0,\"placements\":[],\"colocations\":[" +
                 colocations + "]}\n";
    };
    job(1, "a", 0, 1000, "");
    job(2, "a", 0, 1000, "");
    for (int k = 0; k < 6; ++k) {
        const int id = 10 + 2 * k, t = 10000 * (k + 1);
        job(id, "a", t, t + 2000,
            "{\"job_id\":" + std::to_string(id) + ",\"other\":" + std::to_string(id + 1) +
                ",\"node\":\"n1\",\"sharing\":\"gpu\",\"start\":" + std::to_string(t) +
                ",\"end\":" + std::to_string(t + 2000) + "}");
        job(id + 1, "b", t, t + 2000, "");
    }
    job(99, "a", 0, 50, "", "FAILED");
    const std::string history = write("history.jsonl", lines);
    const std::string profiles = write("profiles.yaml", kProfiles), params = coloc::test::scratch("hist.json");
    Run r = colocctl({"fit", "--history", history, "--profiles", profiles, "--params-out", params, "--json"});
    REQUIRE(r.rc == 0);
    CHECK(has(r.err, "6 ended jobs used"));
    CHECK(has(r.err, "1 failed or cancelled"));
    const nlohmann::json out = nlohmann::json::parse(r.out);
    bool found = false;
    for (const auto& p : out.at("pairs"))
        if (p.at("job") == "a" && p.at("neighbour") == "b") {
            found = true;
            CHECK(p.at("speed").get<double>() == doctest::Approx(0.5).epsilon(0.03));
        }
    CHECK(found);
    std::ifstream in(params);
    const nlohmann::json saved = nlohmann::json::parse(in);
    REQUIRE(saved.at("elapsed_pairs").size() == 1);
    CHECK(saved.at("elapsed_pairs")[0].at("speed").get<double>() == doctest::Approx(0.5).epsilon(0.03));

    r = colocctl({"fit", "--history", history});
    CHECK(r.rc != 0);
    CHECK(has(r.err, "--history needs --profiles"));
}

TEST_CASE("fit --history: sacct -P output; jobs overlapping on a node share what --node-sharing says") {
    // a alone takes 1000 s; a beside b on n1 takes 2000 s; the profile comes from the comment.
    std::string text = "JobID|JobName|User|State|Start|End|Elapsed|NodeList|AllocTRES|Comment\n";
    auto job = [&](int id, const char* profile, const char* start, const char* end, const char* elapsed,
                   const char* state = "COMPLETED") {
        text += std::to_string(id) + "|train|ann|" + state + "|" + start + "|" + end + "|" + elapsed +
                "|n1|gres/gpu=1|coloc-profile=" + profile + "\n";
    };
    job(1, "a", "2024-01-01T00:00:00", "2024-01-01T00:16:40", "00:16:40");
    for (int k = 0; k < 6; ++k) {
        const std::string day = "2024-01-0" + std::to_string(k + 2);
        const std::string from = day + "T00:00:00", to = day + "T00:33:20";
        job(10 + 2 * k, "a", from.c_str(), to.c_str(), "00:33:20");
        job(11 + 2 * k, "b", from.c_str(), to.c_str(), "00:33:20");
    }
    job(99, "a", "2024-01-09T00:00:00", "2024-01-09T00:10:00", "00:10:00", "FAILED");
    const std::string sacct = write("jobs.sacct", text), profiles = write("profiles.yaml", kProfiles);
    Run r = colocctl({"fit", "--history", sacct, "--profiles", profiles, "--node-sharing", "gpu", "--json"});
    REQUIRE(r.rc == 0);
    CHECK(has(r.err, "6 ended jobs used"));
    CHECK(has(r.err, "1 failed or cancelled"));
    bool found = false;
    const nlohmann::json fitted = nlohmann::json::parse(r.out);
    for (const auto& p : fitted.at("pairs"))
        if (p.at("job") == "a" && p.at("neighbour") == "b") {
            found = true;
            CHECK(p.at("where") == "gpu");
            CHECK(p.at("speed").get<double>() == doctest::Approx(0.5).epsilon(0.03));
        }
    CHECK(found);

    // Without the solo run, the runtime a profile declares is the solo work.
    const std::string no_solo =
        write("no-solo.sacct", text.substr(0, text.find("\n1|")) + text.substr(text.find("\n10|")));
    r = colocctl({"fit", "--history", no_solo, "--profiles", profiles, "--node-sharing", "gpu"});
    CHECK(has(r.err, "0 ended jobs used"));
    const std::string declared = write("declared.yaml",
                                       "profiles:\n  - { name: a, sm_util: 0.5, runtime_s: 1000 }\n"
                                       "  - { name: b, sm_util: 0.3 }\n");
    r = colocctl({"fit", "--history", no_solo, "--profiles", declared, "--node-sharing", "gpu"});
    REQUIRE(r.rc == 0);
    CHECK(has(r.err, "6 ended jobs used"));

    // By default a shared node is only a shared node: no same-GPU pair is settled.
    r = colocctl({"fit", "--history", sacct, "--profiles", profiles, "--json"});
    REQUIRE(r.rc == 0);
    CHECK(has(r.err, "0 same-GPU pairs settled"));

    // A bad line: its line and why; --skip-bad counts it instead.
    const std::string bad = write("bad.sacct", text +
                                                   "100|x|ann|COMPLETED|soon|2024-01-09T00:10:00|00:10:00|n1|"
                                                   "gres/gpu=1|\n");
    r = colocctl({"fit", "--history", bad, "--profiles", profiles});
    CHECK(r.rc == 1);
    CHECK(has(r.err, bad + ":16: Start 'soon' is not a time"));
    r = colocctl({"fit", "--history", bad, "--profiles", profiles, "--skip-bad"});
    CHECK(r.rc == 0);
    CHECK(has(r.err, "skipped 1 malformed lines of " + bad + ", the first at line 16"));
    r = colocctl({"fit", "--history", sacct, "--profiles", profiles, "--node-sharing", "rack"});
    CHECK(r.rc == 1);
    CHECK(has(r.err, "--node-sharing: unknown level 'rack'"));
}
