#include <doctest/doctest.h>

#include <sys/wait.h>
#include <unistd.h>
#include <zmq.h>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <mutex>
#include <sstream>
#include <thread>
#include <vector>

#include "client/coloc_report.h"
#include "client/reporter.hpp"
#include "ctl/cli.hpp"
#include "proto/auth.hpp"
#include "proto/client.hpp"
#include "proto/envelope.hpp"
#include "tests/unit/fake_router.hpp"
#include "tests/unit/running_server.hpp"
#include "tests/unit/test_env.hpp"

using namespace coloc;
using proto::json;

namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }

struct Lines {
    std::mutex mu;
    std::vector<std::string> lines;
    client::LogSink sink() {
        return [this](const std::string& l) {
            std::lock_guard lock(mu);
            lines.push_back(l);
        };
    }
    std::vector<std::string> get() {
        std::lock_guard lock(mu);
        return lines;
    }
};

client::ReportSettings settings(const std::string& endpoint, double interval_s, int timeout_ms) {
    client::ReportSettings s;
    s.endpoint = endpoint;
    s.job_id = 42;
    s.node = "n1";
    s.munge_socket = test::munge_socket();
    s.interval_s = interval_s;
    s.timeout_ms = timeout_ms;
    return s;
}

// A colocd stand-in: records each request and answers ok, or, frozen, reads nothing and answers
// nothing.
test::FakeRouter fake_colocd(bool frozen = false) {
    test::FakeRouter::Answer ok = [](const std::string& request) {
        return proto::echo_nonce(request, proto::ok_reply({{"measured_slowdown", 1.0}}));
    };
    return {"ipc://" + test::scratch("fake-colocd.sock"), frozen ? nullptr : ok};
}

// Reports one iteration per send to a colocd that cannot answer: the training thread never
// waits, every send fails, and only the first failure says so.
void check_unanswered(const std::string& endpoint) {
    Lines log;
    // A call that waited for its send would take the whole 200 ms timeout against a frozen
    // colocd; 50 ms leaves room for a loaded 2-core machine running the sanitized build.
    client::Reporter r(settings(endpoint, 0, 200), log.sink());
    for (int i = 0; i < 4; ++i) {
        auto t0 = Clock::now();
        r.iteration(0.1);
        CHECK(ms_since(t0) < 50);
        REQUIRE(r.wait_idle(5000));
    }
    auto t0 = Clock::now();
    r.iteration(0.1);
    r.close();
    CHECK(ms_since(t0) < 200 + 100);  // one bounded send
    CHECK(r.failed() == 5);
    CHECK(r.sent() == 0);
    auto lines = log.get();
    REQUIRE(lines.size() == 1);
    CHECK(lines[0].rfind("coloc: job 42: ", 0) == 0);
    CHECK(lines[0].find("unavailable") != std::string::npos);
}

// Sets the variables of a job coloc placed for the C API, and clears them again.
struct JobEnv {
    explicit JobEnv(const std::string& endpoint, const std::string& job = "1") {
        setenv("SLURM_JOB_ID", job.c_str(), 1);
        setenv("COLOC_DECISION", "7", 1);
        setenv("COLOC_ENDPOINT", endpoint.c_str(), 1);
        setenv("SLURMD_NODENAME", "n1", 1);
        setenv("COLOC_REPORT_INTERVAL_S", "0", 1);
    }
    ~JobEnv() {
        for (const char* v : {"SLURM_JOB_ID", "COLOC_DECISION", "COLOC_ENDPOINT", "SLURMD_NODENAME",
                              "COLOC_REPORT_INTERVAL_S", "COLOC_REPORT_TIMEOUT_MS", "COLOC_REPORT"})
            unsetenv(v);
    }
};

// Runs `colocctl ARGS...` in this process; returns its exit code, with what it printed.
int colocctl(std::vector<std::string> args, std::string& out, std::string& err) {
    args.insert(args.begin(), "colocctl");
    std::vector<const char*> argv;
    for (const std::string& a : args) argv.push_back(a.c_str());
    std::ostringstream o, e;
    auto* old_out = std::cout.rdbuf(o.rdbuf());
    auto* old_err = std::cerr.rdbuf(e.rdbuf());
    int rc = 0;
    try {
        rc = ctl::colocctl_main(static_cast<int>(argv.size()), argv.data());
    } catch (...) {
        rc = -1;
    }
    std::cout.rdbuf(old_out);
    std::cerr.rdbuf(old_err);
    out = o.str();
    err = e.str();
    return rc;
}

}  // namespace

TEST_CASE("coloc_report: with colocd down, an iteration returns at once and one line says so") {
    check_unanswered("ipc://" + test::scratch("nobody.sock"));
}

TEST_CASE("coloc_report: with colocd frozen, an iteration returns at once and one line says so") {
    test::FakeRouter frozen = fake_colocd(/*frozen=*/true);
    check_unanswered(frozen.endpoint);
}

TEST_CASE("coloc_report: iterations within an interval go as one mean with their count, sealed with munge") {
    test::FakeRouter colocd = fake_colocd();
    Lines log;
    client::Reporter r(settings(colocd.endpoint, 0.3, 2000), log.sink());
    for (int i = 0; i < 3; ++i) r.iteration(0.1);
    r.iteration(-1);            // ignored
    r.iteration(std::nan(""));  // ignored
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    CHECK(colocd.received().empty());  // the interval has not passed
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
    r.iteration(0.5);
    REQUIRE(r.wait_idle(5000));
    auto got = colocd.received();
    REQUIRE(got.size() == 1);
    proto::Request req = proto::open_request(got[0]);
    CHECK(req.op == "observe");
    CHECK(req.body["job_id"] == 42);
    CHECK(req.body["iter_time_s"].get<double>() == doctest::Approx(0.2));
    CHECK(req.body["iterations"] == 4);
    CHECK(req.body["node"] == "n1");
    CHECK(proto::verify_credential(req.cred, req.canonical, test::munge_socket(), 60).uid == getuid());
    r.iteration(0.25);  // within the next interval: sent by close
    r.close();
    got = colocd.received();
    REQUIRE(got.size() == 2);
    json last = proto::open_request(got[1]).body;
    CHECK(last["iter_time_s"].get<double>() == doctest::Approx(0.25));
    CHECK(last["iterations"] == 1);
    CHECK(r.sent() == 2);
    CHECK(log.get().empty());
}

TEST_CASE("coloc_report: a forked child (a data loader worker) reports nothing and does not hang") {
    test::FakeRouter colocd = fake_colocd();
    JobEnv env(colocd.endpoint);
    setenv("COLOC_REPORT_TIMEOUT_MS", "2000", 1);
    REQUIRE(coloc_report_init() == 1);
    pid_t child = fork();
    REQUIRE(child >= 0);
    if (child == 0) {
        coloc_report_iteration(9.0);
        coloc_report_flush();
        coloc_report_close();
        _exit(0);
    }
    int status = -1;
    REQUIRE(waitpid(child, &status, 0) == child);
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
    coloc_report_iteration(0.5);
    coloc_report_close();
    auto got = colocd.received();
    REQUIRE(got.size() == 1);
    CHECK(proto::open_request(got[0]).body["iter_time_s"].get<double>() == doctest::Approx(0.5));
}

TEST_CASE("coloc_report: settings come from the job's environment") {
    std::string why;
    CHECK_FALSE(client::settings_from_env(why));  // not in a job
    CHECK(why.empty());
    {
        JobEnv env("ipc:///tmp/x.sock", "123");
        auto s = client::settings_from_env(why);
        REQUIRE(s);
        CHECK(s->job_id == 123);
        CHECK(s->endpoint == "ipc:///tmp/x.sock");
        CHECK(s->node == "n1");
        CHECK(s->interval_s == 0);
        CHECK(s->timeout_ms == 500);
        unsetenv("COLOC_ENDPOINT");
        unsetenv("COLOC_REPORT_INTERVAL_S");
        s = client::settings_from_env(why);
        REQUIRE(s);
        CHECK(s->endpoint == "ipc:///run/coloc/colocd.sock");
        CHECK(s->interval_s == 30);
        setenv("COLOC_REPORT_INTERVAL_S", "soon", 1);
        CHECK_FALSE(client::settings_from_env(why));
        CHECK(why.find("COLOC_REPORT_INTERVAL_S=soon") != std::string::npos);
        setenv("COLOC_REPORT_INTERVAL_S", "5", 1);
        setenv("COLOC_REPORT_TIMEOUT_MS", "0", 1);
        CHECK_FALSE(client::settings_from_env(why));
        CHECK(why.find("COLOC_REPORT_TIMEOUT_MS") != std::string::npos);
        unsetenv("COLOC_REPORT_TIMEOUT_MS");
        setenv("COLOC_REPORT", "0", 1);
        CHECK_FALSE(client::settings_from_env(why));
        CHECK(why.empty());
        unsetenv("COLOC_REPORT");
        unsetenv("COLOC_DECISION");  // a job coloc did not place
        CHECK_FALSE(client::settings_from_env(why));
    }
    CHECK(coloc_report_init() == 0);
    coloc_report_iteration(1.0);  // off: nothing happens
    coloc_report_close();
}

TEST_CASE("coloc_report: an iteration time reported through the C API teaches colocd's model") {
    daemon::Config c = daemon::parse_config(R"(node_types: { quad: { gpus: 4, slots_per_gpu: 2 } }
nodes: [ { names: "n1", type: quad } ]
)",
                                            "test.yaml");
    c.database = test::scratch("report.db");
    c.munge_socket = test::munge_socket();
    test::RunningServer s(std::move(c));
    json placed =
        proto::call(s.endpoint, {{"op", "place"}, {"job_id", 1}, {"node", "n1"}, {"slots", 1}, {"mode", "bind"}},
                    {test::munge_socket(), 5000});
    REQUIRE(placed["ok"] == true);
    JobEnv env(s.endpoint);
    setenv("COLOC_REPORT_TIMEOUT_MS", "5000", 1);
    REQUIRE(coloc_report_init() == 1);
    auto t0 = Clock::now();
    coloc_report_iteration(0.3);
    coloc_report_iteration(0.5);
    CHECK(ms_since(t0) < 50);  // the send happens on the library's thread
    coloc_report_close();
    CHECK(s.service.counters().observations >= 1);
    json status = proto::call(s.endpoint, {{"op", "status"}}, {test::munge_socket(), 5000});
    const int reported = status["status"]["observations"].get<int>();
    CHECK(reported >= 1);

    // colocctl observe sends the same op.
    std::string out, err;
    CHECK(colocctl({"--endpoint", s.endpoint, "observe", "1", "--iter-time", "0.4", "--iterations", "10"}, out, err) ==
          0);
    CHECK(out.find("job 1: measured slowdown ") == 0);
    CHECK(s.service.counters().observations == reported + 1);
    CHECK(colocctl({"--endpoint", s.endpoint, "--json", "observe", "1", "--iter-time", "0.4"}, out, err) == 0);
    CHECK(json::parse(out)["observation"]["job_id"] == 1);
    CHECK(colocctl({"--endpoint", s.endpoint, "observe", "99", "--iter-time", "0.4"}, out, err) == 1);
    CHECK(err.find("colocctl: error: job 99 is not known to colocd") == 0);
    CHECK(colocctl({"--endpoint", s.endpoint, "observe", "1"}, out, err) == 2);  // --iter-time is required
}
