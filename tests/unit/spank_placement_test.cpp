#include <doctest/doctest.h>

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <thread>

#include "proto/errors.hpp"
#include "spank/local_state.hpp"
#include "spank/placement.hpp"
#include "spank/user_notice.hpp"
#include "tests/unit/test_env.hpp"

using namespace coloc::spank;
using json = nlohmann::json;
using coloc::proto::ProtoError;

namespace {

// colocd, slurmctld and the clock as a test wants them. The slot lookup runs in the plugin's
// forked child, so it leaves its traces in a file (the call does too, alike).
struct World {
    std::string dir = coloc::test::scratch("spank-place");
    std::string calls_file = dir + "/calls";
    std::string lookups_file = dir + "/lookups";
    std::vector<std::string> logs;
    int slots = 1;
    std::function<json(const json& body)> colocd = [](const json&) -> json {
        throw ProtoError(coloc::proto::code::kUnavailable, "colocd did not answer");
    };
    std::int64_t clock = 1000;
    PluginConfig config;

    World() {
        std::filesystem::create_directories(dir);
        config.endpoint = "tcp://127.0.0.1:9";  // not ipc://: no socket-file shortcut
        config.timeout_ms = 200;
        config.gpus = 4;
        config.slots_per_gpu = 2;
        config.state_dir = dir + "/run";
    }
    ~World() {
        std::error_code ec;
        std::filesystem::remove_all(dir, ec);
    }

    Services services() {
        Services s;
        s.lookup_slots = [this](const JobFacts&, const std::string&, std::string& why) {
            std::ofstream(lookups_file, std::ios::app) << "lookup\n";
            if (slots < 0) why = "slurmctld said no";
            return slots;
        };
        s.call = [this](const std::string&, const json& body, const coloc::proto::CallOptions&) {
            std::ofstream(calls_file, std::ios::app) << body.dump() << "\n";
            return colocd(body);
        };
        s.now = [this] { return clock; };
        s.log = [this](const std::string& line) { logs.push_back(line); };
        return s;
    }

    std::vector<json> calls() const {
        std::vector<json> out;
        std::ifstream in(calls_file);
        for (std::string line; std::getline(in, line);) out.push_back(json::parse(line));
        return out;
    }
    int lookups() const {
        std::ifstream in(lookups_file);
        int n = 0;
        for (std::string line; std::getline(in, line);) ++n;
        return n;
    }
    NodeState state(const std::string& node = "n1") const {
        NodeState out;
        StateFile(config.state_dir, node).update(100, [&](NodeState& s) {
            out = s;
            return false;
        });
        return out;
    }

    Outcome place(const JobFacts& f, UserOptions o = {}) { return choose_step_gpus(config, o, f, services()); }
};

JobFacts bind_job(std::int64_t id, const std::string& node = "n1") {
    JobFacts f;
    f.job_id = id;
    f.uid = 1000;
    f.node = node;
    f.partition = "bind";
    f.job_name = "train";
    f.job_nodes = {node};
    return f;
}

JobFacts narrow_job(std::int64_t id, std::vector<int> gpus) {
    JobFacts f = bind_job(id);
    f.partition = "narrow";
    f.slurm_gpus = gpus;
    f.cuda_visible = gpus;
    return f;
}

json reply(const std::string& mode, std::vector<int> gpus, std::int64_t decision) {
    return {{"v", 1}, {"ok", true}, {"decision", decision}, {"mode", mode}, {"gpus", gpus}};
}

}  // namespace

TEST_CASE("spank: colocd's bind choice is applied and recorded; a later step reuses it without asking") {
    World w;
    w.slots = 2;
    w.colocd = [](const json&) { return reply("bind", {1, 3}, 41); };
    Outcome first = w.place(bind_job(5));
    CHECK(first.set_devices);
    CHECK(first.visible_devices == "1,3");
    CHECK(first.decision_label == "41");
    CHECK(first.report_started);
    CHECK(w.logs.empty());
    auto calls = w.calls();
    REQUIRE(calls.size() == 1);
    CHECK(calls[0]["op"] == "place");
    CHECK(calls[0]["slots"] == 0);  // colocd reads the count from Slurm: no lookup here
    CHECK(calls[0]["slots_gres"] == "gpuslot");
    CHECK(calls[0]["node"] == "n1");
    CHECK(calls[0]["job_uid"] == 1000);
    NodeState s = w.state();
    REQUIRE(s.holdings.size() == 1);
    CHECK(s.holdings[0].reported);
    CHECK(s.holdings[0].decision == 41);

    CHECK(w.lookups() == 0);
    CHECK(first.times.path == "colocd");
    CHECK(first.times.call_ms >= 0);
    CHECK(first.times.lookup_ms < 0);

    Outcome later = w.place(bind_job(5));
    CHECK(w.calls().size() == 1);
    CHECK(w.lookups() == 0);
    CHECK(later.times.path == "reuse");
    CHECK(later.times.lock_ms >= 0);
    CHECK(later.times.call_ms < 0);
    CHECK(later.visible_devices == "1,3");
    CHECK(later.decision_label == "41");
    CHECK_FALSE(later.report_started);
}

TEST_CASE("spank: narrow: colocd's subset is applied, a GPU outside the step is refused") {
    World w;
    w.colocd = [](const json&) { return reply("narrow", {2}, 7); };
    Outcome ok = w.place(narrow_job(5, {1, 2}));
    CHECK(ok.visible_devices == "2");
    CHECK(ok.decision_label == "7");
    CHECK(w.lookups() == 0);  // Slurm named the GPUs: no slot lookup
    CHECK(w.calls()[0]["slurm_gpus"] == json{1, 2});

    w.colocd = [](const json&) { return reply("narrow", {3}, 8); };
    Outcome refused = w.place(narrow_job(6, {1, 2}));
    CHECK_FALSE(refused.set_devices);
    CHECK(refused.decision_label.empty());
    REQUIRE(w.logs.size() == 1);
    CHECK(w.logs[0].find("outside the step's GPUs 1,2") != std::string::npos);
    CHECK(w.logs[0].find("keeping Slurm's GPUs 1,2") != std::string::npos);
}

TEST_CASE("spank: a later narrow step gets the job's choice only within its own GPUs") {
    World w;
    w.colocd = [](const json&) { return reply("narrow", {1}, 7); };
    w.place(narrow_job(5, {0, 1, 2}));
    CHECK(w.place(narrow_job(5, {0, 1, 2})).visible_devices == "1");
    Outcome other = w.place(narrow_job(5, {0}));  // srun --gres=gpu:1 got GPU 0 only
    CHECK_FALSE(other.set_devices);
    CHECK(w.calls().size() == 1);
}

TEST_CASE("spank: colocd down in bind mode: a local choice, carried to colocd when it is back") {
    World w;
    Outcome o = w.place(bind_job(5));
    CHECK(o.set_devices);
    CHECK(o.visible_devices == "0");
    CHECK(o.decision_label == "local");
    CHECK(o.report_started);  // reported as the task starts, and again with the next request until taken
    REQUIRE(w.logs.size() == 1);
    CHECK(w.logs[0].rfind("job 5 on n1: colocd did not answer (deadline 200 ms); fell back after ", 0) == 0);
    CHECK(w.logs[0].find(" ms; GPUs 0 chosen locally") != std::string::npos);
    CHECK_FALSE(w.state().holdings[0].reported);

    w.colocd = [](const json&) { return reply("bind", {2}, 50); };
    Outcome back = w.place(bind_job(6));
    CHECK(back.visible_devices == "2");
    auto calls = w.calls();
    REQUIRE(calls.size() == 2);
    REQUIRE(calls[1]["unreported"].size() == 1);
    CHECK(calls[1]["unreported"][0]["job_id"] == 5);
    CHECK(calls[1]["unreported"][0]["gpus"] == json{0});
    CHECK(calls[1]["unreported"][0]["since"] == 1000);
    for (const Holding& h : w.state().holdings) CHECK(h.reported);

    w.place(bind_job(7));
    CHECK_FALSE(w.calls()[2].contains("unreported"));
}

TEST_CASE("spank: eight bind jobs with colocd down share four GPUs two by two") {
    World w;
    for (int job = 1; job <= 8; ++job) CHECK(w.place(bind_job(job)).set_devices);
    CHECK(slot_use(w.state(), 4) == std::vector<int>{2, 2, 2, 2});
    CHECK(w.logs.size() == 8);
}

TEST_CASE("spank: a frozen colocd costs the deadline, and a local choice at most the slot lookup more") {
    World w;
    w.slots = 2;
    int budget = -1;
    Services s = w.services();
    // The call bounds itself (proto_client_bounds_test.cpp): a frozen colocd uses the whole budget.
    s.call = [&](const std::string&, const json&, const coloc::proto::CallOptions& options) -> json {
        budget = options.timeout_ms;
        std::this_thread::sleep_for(std::chrono::milliseconds(options.timeout_ms));
        throw ProtoError(coloc::proto::code::kUnavailable,
                         "colocd did not answer within " + std::to_string(options.timeout_ms) + " ms");
    };
    auto t0 = std::chrono::steady_clock::now();
    Outcome o = choose_step_gpus(w.config, {}, bind_job(5), s);
    auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0).count();
    CHECK(budget > 0);
    CHECK(budget <= 200 - kReplyMarginMs);
    CHECK(ms >= 200 - kReplyMarginMs);
    CHECK(ms < 200 + kFallbackLookupMs + 150);
    CHECK(o.decision_label == "local");
    CHECK(o.gpus.size() == 2);  // Slurm's two slots, asked after colocd failed
    CHECK(w.lookups() == 1);
    CHECK(o.times.path == "fallback");
    CHECK(o.times.lookup_ms >= 0);
    REQUIRE(w.logs.size() == 1);
    CHECK(w.logs[0].find("did not answer within") != std::string::npos);
}

TEST_CASE("spank: a stalled slot lookup (colocd away) also ends at the deadline, assuming one slot") {
    World w;
    w.config.timeout_ms = 100;
    Services s = w.services();
    s.lookup_slots = [](const JobFacts&, const std::string&, std::string&) {
        std::this_thread::sleep_for(std::chrono::seconds(10));
        return 3;
    };
    auto t0 = std::chrono::steady_clock::now();
    Outcome o = choose_step_gpus(w.config, {}, bind_job(5), s);
    auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0).count();
    CHECK(ms < 100 + 150);
    CHECK(o.visible_devices == "0");
    REQUIRE(w.logs.size() == 1);
    CHECK(w.logs[0].find("slurmctld did not answer the slot lookup") != std::string::npos);
    CHECK(w.logs[0].find("assuming 1") != std::string::npos);
}

TEST_CASE("spank: a garbage reply or a refusal falls back with one line") {
    World w;
    w.colocd = [](const json&) { return json{{"v", 1}, {"ok", true}, {"decision", "x"}}; };
    CHECK(w.place(bind_job(5)).decision_label == "local");
    w.colocd = [](const json&) { return reply("bind", {9}, 3); };  // no GPU 9 on a 4-GPU node
    CHECK(w.place(bind_job(6)).decision_label == "local");
    w.colocd = [](const json&) -> json { throw ProtoError("no_capacity", "node full"); };
    CHECK(w.place(bind_job(7)).decision_label == "local");
    REQUIRE(w.logs.size() == 3);
    CHECK(w.logs[0].find("reply is unusable") != std::string::npos);
    CHECK(w.logs[1].find("GPU 9 on a node with 4") != std::string::npos);
    CHECK(w.logs[2].find("refused the request: no_capacity") != std::string::npos);
}

TEST_CASE("spank: each way the call fails has its own line") {
    World w;
    w.colocd = [](const json&) -> json { throw ProtoError(coloc::proto::code::kBadVersion, "version 2"); };
    w.place(bind_job(5));
    w.colocd = [](const json&) -> json { throw ProtoError(coloc::proto::code::kInternal, "munge: no munged"); };
    w.place(bind_job(6));
    w.colocd = [](const json&) -> json { throw std::runtime_error("zmq: out of memory"); };
    w.place(bind_job(7));
    REQUIRE(w.logs.size() == 3);
    CHECK(w.logs[0].rfind("job 5 on n1: colocd's reply is unusable: version 2; fell back after ", 0) == 0);
    CHECK(w.logs[1].rfind("job 6 on n1: munge: no munged; fell back after ", 0) == 0);
    CHECK(w.logs[2].rfind("job 7 on n1: zmq: out of memory; fell back after ", 0) == 0);
}

TEST_CASE("spank: a crash of the slot lookup is a fallback on one slot, not a crash of the step") {
    World w;
    Services s = w.services();
    s.lookup_slots = [](const JobFacts&, const std::string&, std::string&) {
        ::raise(SIGTERM);
        return 2;
    };
    Outcome o = choose_step_gpus(w.config, {}, bind_job(5), s);
    CHECK(o.decision_label == "local");
    CHECK(o.gpus.size() == 1);
    REQUIRE(w.logs.size() == 1);
    CHECK(w.logs[0].find("helper process died of signal 15") != std::string::npos);
    CHECK(w.logs[0].find("assuming 1") != std::string::npos);
}

TEST_CASE("spank: each node name has its own state") {
    World w;
    for (int job = 1; job <= 2; ++job) CHECK(w.place(bind_job(job, "n1")).visible_devices == std::to_string(job - 1));
    CHECK(w.place(bind_job(3, "n2")).visible_devices == "0");
    CHECK(w.state("n1").holdings.size() == 2);
    CHECK(w.state("n2").holdings.size() == 1);
}

TEST_CASE("spank: --coloc=off in bind mode gets GPUs of its own slots, chosen here, without asking colocd") {
    World w;
    w.slots = 2;
    w.colocd = [](const json&) { return reply("bind", {3}, 9); };
    UserOptions off;
    off.off = true;
    REQUIRE(w.place(bind_job(4)).set_devices);  // a neighbour colocd placed on GPU 3, one slot
    Outcome o = w.place(bind_job(5), off);
    CHECK(o.set_devices);
    CHECK(o.decision_label == "local");
    CHECK(o.gpus.size() == 2);  // its two slots, not every GPU of the node
    CHECK(o.visible_devices.find('3') == std::string::npos);
    CHECK(w.calls().size() == 1);  // only job 4's
    CHECK(w.lookups() == 1);       // only job 5's: colocd read job 4's
    REQUIRE(w.logs.size() == 1);
    CHECK(w.logs[0].rfind("job 5 on n1: --coloc=off; GPUs ", 0) == 0);
    REQUIRE(w.state().find(5) != nullptr);
    CHECK_FALSE(w.state().find(5)->reported);                               // colocd hears of it with the next request
    CHECK(w.place(bind_job(5), off).visible_devices == o.visible_devices);  // a later step reuses it
    CHECK(w.lookups() == 1);
    CHECK(w.place(bind_job(6)).set_devices);
    CHECK(w.calls().back()["unreported"][0]["job_id"] == 5);
}

TEST_CASE("spank: --coloc=off in narrow mode keeps Slurm's GPUs, asks nothing, records nothing") {
    World w;
    UserOptions off;
    off.off = true;
    Outcome o = w.place(narrow_job(5, {1, 2}), off);
    CHECK_FALSE(o.set_devices);
    CHECK(o.decision_label.empty());
    CHECK(w.calls().empty());
    CHECK(w.lookups() == 0);
    CHECK_FALSE(std::filesystem::exists(w.config.state_dir));
}

TEST_CASE("spank: a job with no bind slots here is not placed, and later steps do not ask again") {
    World w;
    w.colocd = [](const json&) {
        return json{{"v", 1}, {"ok", true}, {"decision", 0}, {"mode", "bind"}, {"gpus", json::array()}, {"slots", 0}};
    };
    CHECK_FALSE(w.place(bind_job(5)).set_devices);
    CHECK_FALSE(w.place(bind_job(5)).set_devices);
    CHECK(w.calls().size() == 1);
    CHECK(w.lookups() == 0);
    CHECK(w.logs.empty());

    // colocd away: Slurm's count, asked here, says the same.
    w.slots = 0;
    w.colocd = [](const json&) -> json { throw ProtoError(coloc::proto::code::kUnavailable, "colocd did not answer"); };
    CHECK_FALSE(w.place(bind_job(6)).set_devices);
    CHECK_FALSE(w.place(bind_job(6)).set_devices);
    CHECK(w.calls().size() == 2);
    CHECK(w.lookups() == 1);
    CHECK(w.logs.empty());
}

TEST_CASE("spank: without gpus= and slots_per_gpu= there is no local choice") {
    World w;
    w.config.gpus = 0;
    Outcome o = w.place(bind_job(5));
    CHECK_FALSE(o.set_devices);
    REQUIRE(w.logs.size() == 1);
    CHECK(w.logs[0].find("gpus= and slots_per_gpu=") != std::string::npos);
}

TEST_CASE("spank: colocd down in narrow mode keeps Slurm's GPUs, recorded so later steps do not wait again") {
    World w;
    Outcome o = w.place(narrow_job(5, {1, 2}));
    CHECK_FALSE(o.set_devices);
    CHECK(o.decision_label.empty());
    w.place(narrow_job(5, {1, 2}));
    CHECK(w.calls().size() == 1);
    NodeState s = w.state();
    REQUIRE(s.holdings.size() == 1);
    CHECK(s.holdings[0].keep_slurm);
    CHECK_FALSE(s.holdings[0].reported);
    CHECK(s.holdings[0].gpus == std::vector<int>{1, 2});
}

TEST_CASE("spank: an ipc endpoint without its socket file fails at once") {
    World w;
    w.config.timeout_ms = 1000;  // "at once" = well before this deadline, even under ASan
    w.config.endpoint = "ipc://" + w.dir + "/missing.sock";
    w.colocd = [](const json&) { return reply("bind", {3}, 1); };
    auto t0 = std::chrono::steady_clock::now();
    Outcome o = w.place(bind_job(5));
    auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0).count();
    CHECK(ms < 500);
    CHECK(o.decision_label == "local");
    CHECK(w.calls().empty());
    CHECK(w.logs[0].find("colocd is not running") != std::string::npos);
}

TEST_CASE("spank: the epilog reports the end; what colocd missed goes with a later request") {
    World w;
    w.colocd = [](const json&) { return reply("bind", {1}, 60); };
    w.place(bind_job(4));  // placed by colocd
    w.colocd = [](const json&) -> json { throw ProtoError(coloc::proto::code::kUnavailable, "colocd did not answer"); };
    w.place(bind_job(5));  // placed here
    w.clock = 1030;
    report_ended(w.config, 4, "n1", 3, w.services());
    report_ended(w.config, 5, "n1", 0, w.services());
    NodeState s = w.state();
    REQUIRE(s.holdings.size() == 2);  // both ended, neither end delivered
    for (const Holding& h : s.holdings) CHECK_FALSE(h.active());
    CHECK(slot_use(s, 4) == std::vector<int>{0, 0, 0, 0});
    CHECK(w.logs.back().find("ended report not delivered") != std::string::npos);

    // colocd is back: the next place request carries both ends.
    std::size_t before = w.calls().size();
    w.colocd = [](const json&) { return reply("bind", {2}, 61); };
    w.place(bind_job(6));
    auto calls = w.calls();
    REQUIRE(calls.size() == before + 1);
    const json& u = calls.back()["unreported"];
    REQUIRE(u.size() == 2);
    CHECK(u[0]["job_id"] == 4);
    CHECK(u[0]["ended"] == 1030);
    CHECK(u[0]["exit_status"] == 3);
    CHECK(u[0]["elapsed_s"] == 30);
    CHECK(u[1]["job_id"] == 5);
    CHECK(u[1]["gpus"] == json{0});
    s = w.state();
    REQUIRE(s.holdings.size() == 1);
    CHECK(s.holdings[0].job_id == 6);
}

TEST_CASE("spank: a busy node lock loses no local choice and no end: both reach colocd later") {
    World w;
    w.place(bind_job(4));  // colocd down: placed here, on GPU 0
    StateFile(w.config.state_dir, "n1").update(50, [](NodeState&) { return false; });
    int fd = ::open((w.config.state_dir + "/n1.lock").c_str(), O_RDWR);
    REQUIRE(fd >= 0);
    REQUIRE(::flock(fd, LOCK_EX) == 0);
    Outcome o = w.place(bind_job(5));
    CHECK(o.visible_devices == "1");  // chosen from the state as last written: GPU 0 is in use
    CHECK(w.logs.back().find("left as a note") != std::string::npos);
    w.clock = 1030;
    report_ended(w.config, 4, "n1", 0, w.services());
    CHECK(w.logs.back().find("the end left as a note") != std::string::npos);
    ::close(fd);

    w.colocd = [](const json&) { return reply("bind", {2}, 70); };
    w.place(bind_job(6));
    const json u = w.calls().back()["unreported"];
    REQUIRE(u.size() == 2);
    CHECK(u[0]["job_id"] == 4);
    CHECK(u[0]["ended"] == 1030);
    CHECK(u[1]["job_id"] == 5);
    CHECK(u[1]["gpus"] == json{1});
    NodeState s = w.state();
    CHECK(s.find(5) != nullptr);
    CHECK(s.find(4) == nullptr);
    CHECK(slot_use(s, 4) == std::vector<int>{0, 1, 1, 0});
}

TEST_CASE("spank: a later epilog delivers ends an earlier one could not") {
    World w;
    w.place(bind_job(5));  // colocd down: a local placement colocd never heard of
    w.place(bind_job(6));
    w.clock = 1030;
    report_ended(w.config, 5, "n1", 3, w.services());
    REQUIRE(w.state().holdings.size() == 2);

    w.colocd = [](const json&) { return json{{"v", 1}, {"ok", true}}; };
    std::size_t before = w.calls().size();
    report_ended(w.config, 6, "n1", 0, w.services());
    auto calls = w.calls();
    // Each local placement: `started` without a decision (colocd adopts it), then `ended`.
    REQUIRE(calls.size() == before + 4);
    CHECK(calls[before]["op"] == "started");
    CHECK(calls[before]["job_id"] == 6);
    CHECK(calls[before]["decision"] == 0);
    CHECK(calls[before + 1]["op"] == "ended");
    CHECK(calls[before + 1]["job_id"] == 6);
    CHECK(calls[before + 3]["op"] == "ended");
    CHECK(calls[before + 3]["job_id"] == 5);
    CHECK(calls[before + 3]["exit_status"] == 3);
    CHECK(calls[before + 3]["time"] == 1030);
    CHECK(w.state().holdings.empty());

    // A job with nothing here (e.g. --coloc=off) sends nothing.
    report_ended(w.config, 99, "n1", 0, w.services());
    CHECK(w.calls().size() == before + 4);
}

TEST_CASE("spank: started is reported once colocd placed the step, without holding the tasks back") {
    World w;
    w.config.timeout_ms = 1000;  // room for a sanitized fork
    w.colocd = [](const json&) { return reply("bind", {2}, 41); };
    Outcome o = w.place(bind_job(5));
    w.colocd = [](const json& body) {
        std::this_thread::sleep_for(std::chrono::milliseconds(300));  // a slow colocd
        return json{{"v", 1}, {"ok", true}, {"echo", body}};
    };
    auto t0 = std::chrono::steady_clock::now();
    report_started(w.config, bind_job(5), o, w.services());
    auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0).count();
    CHECK(ms < 150);
    std::vector<json> calls;
    for (int i = 0; i < 200 && (calls = w.calls()).size() < 2; ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    REQUIRE(calls.size() == 2);
    CHECK(calls[1]["op"] == "started");
    CHECK(calls[1]["decision"] == 41);
    CHECK(calls[1]["gpus"] == json{2});

    Outcome reused;  // a later step, or one that chose nothing: nothing to report
    report_started(w.config, bind_job(6), reused, w.services());
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    CHECK(w.calls().size() == 2);
}

namespace {

std::vector<json> wait_calls(const World& w, std::size_t n) {
    std::vector<json> calls;
    for (int i = 0; i < 300 && (calls = w.calls()).size() < n; ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    return calls;
}

bool wait_reported(const World& w, std::int64_t job) {
    for (int i = 0; i < 300; ++i) {
        const NodeState s = w.state();
        if (s.find(job) && s.find(job)->reported) return true;
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return false;
}

}  // namespace

TEST_CASE("spank: a local choice is reported as the job starts: colocd knows the job before its own reports") {
    World w;
    w.config.timeout_ms = 1000;  // room for a sanitized fork
    w.colocd = [](const json&) -> json { throw ProtoError(coloc::proto::code::kUnavailable, "colocd is slow"); };
    Outcome o = w.place(bind_job(5));
    REQUIRE(o.decision_label == "local");
    REQUIRE(o.report_started);
    w.colocd = [](const json& body) { return json{{"v", 1}, {"ok", true}, {"echo", body}}; };
    auto t0 = std::chrono::steady_clock::now();
    report_started(w.config, bind_job(5), o, w.services());
    CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::milliseconds(150));  // the launch does not wait
    std::vector<json> calls = wait_calls(w, 2);
    REQUIRE(calls.size() == 2);
    CHECK(calls[1]["op"] == "started");
    CHECK(calls[1]["decision"] == 0);  // a local choice: colocd adopts it
    CHECK(calls[1]["gpus"] == json{0});
    CHECK(calls[1]["job_uid"] == 1000);  // so that the job's owner may report for it
    // Taken: the next place request from the node carries it no more.
    REQUIRE(wait_reported(w, 5));
    w.colocd = [](const json&) { return reply("bind", {2}, 50); };
    w.place(bind_job(6));
    CHECK_FALSE(w.calls().back().contains("unreported"));
}

TEST_CASE("spank: a local choice whose report colocd refuses is still carried by the next request") {
    World w;
    w.config.timeout_ms = 1000;
    Outcome o = w.place(bind_job(5));  // colocd down
    report_started(w.config, bind_job(5), o, w.services());
    REQUIRE(wait_calls(w, 2).size() == 2);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    CHECK_FALSE(w.state().find(5)->reported);
    w.colocd = [](const json&) { return reply("bind", {2}, 50); };
    w.place(bind_job(6));
    REQUIRE(w.calls().back().contains("unreported"));
    CHECK(w.calls().back()["unreported"][0]["job_id"] == 5);
}

TEST_CASE("spank: colocd's GPUs that the node-local record shows full are not applied: chosen here, and reported") {
    World w;
    w.config.timeout_ms = 1000;
    w.config.gpus = 2;
    // Three local choices colocd has not heard of (it was slow): GPU 0 holds two, GPU 1 one.
    for (int job = 1; job <= 3; ++job) REQUIRE(w.place(bind_job(job)).decision_label == "local");
    REQUIRE(slot_use(w.state(), 2) == std::vector<int>{2, 1});
    // colocd, asked from another node of a two-node job, placed this node's task on GPU 0.
    w.colocd = [](const json&) {
        json r = reply("bind", {0}, 77);
        r["reused"] = true;
        return r;
    };
    w.logs.clear();
    Outcome o = w.place(bind_job(4));
    CHECK(o.set_devices);
    CHECK(o.visible_devices == "1");
    CHECK(o.decision_label == "local");
    CHECK(o.decision == 0);
    CHECK(o.report_started);
    CHECK(o.times.path == "moved");
    REQUIRE(w.logs.size() == 1);
    CHECK(w.logs[0] ==
          "job 4 on n1: colocd's GPUs 0 (decision 77): GPU 0 full in the node-local record; GPUs 1 chosen locally");
    NodeState s = w.state();
    CHECK(slot_use(s, 2) == std::vector<int>{2, 2});
    REQUIRE(s.find(4) != nullptr);
    CHECK(s.find(4)->decision == 0);
    CHECK_FALSE(s.find(4)->reported);
    // The local choices went with the request, and are taken: the record says so.
    for (int job = 1; job <= 3; ++job) CHECK(s.find(job)->reported);

    // colocd hears where the task really runs, in the background.
    w.colocd = [](const json& body) { return json{{"v", 1}, {"ok", true}, {"echo", body}}; };
    const std::size_t before = w.calls().size();
    report_started(w.config, bind_job(4), o, w.services());
    std::vector<json> calls = wait_calls(w, before + 1);
    REQUIRE(calls.size() == before + 1);
    CHECK(calls.back()["op"] == "started");
    CHECK(calls.back()["decision"] == 0);
    CHECK(calls.back()["gpus"] == json{1});
    CHECK(wait_reported(w, 4));

    // A later step of the job keeps the local choice and asks nothing.
    CHECK(w.place(bind_job(4)).visible_devices == "1");
    CHECK(w.calls().size() == before + 1);
}

TEST_CASE("spank: colocd's GPUs are applied when the record has room, and checked under a busy lock too") {
    World w;
    w.config.gpus = 2;
    for (int job = 1; job <= 2; ++job) w.place(bind_job(job));  // GPU 0 and GPU 1, one slot each
    w.colocd = [](const json&) { return reply("bind", {0}, 80); };
    Outcome fits = w.place(bind_job(3));
    CHECK(fits.visible_devices == "0");
    CHECK(fits.decision_label == "80");
    CHECK(fits.times.path == "colocd");
    // GPU 0 is full now. With the node lock busy the reply is checked against the state as last written.
    StateFile(w.config.state_dir, "n1").update(50, [](NodeState&) { return false; });
    int fd = ::open((w.config.state_dir + "/n1.lock").c_str(), O_RDWR);
    REQUIRE(fd >= 0);
    REQUIRE(::flock(fd, LOCK_EX) == 0);
    w.colocd = [](const json&) { return reply("bind", {0}, 81); };
    Outcome busy = w.place(bind_job(4));
    ::close(fd);
    CHECK(busy.visible_devices == "1");
    CHECK(busy.decision_label == "local");
    CHECK(w.logs.back().find("left as a note") != std::string::npos);
    NodeState s = w.state();  // the note merged
    CHECK(slot_use(s, 2) == std::vector<int>{2, 2});
    CHECK(s.find(4)->gpus == std::vector<int>{1});
}

TEST_CASE("spank: colocd's word that the profile is unknown reaches the step, for the line in its stderr") {
    World w;
    w.colocd = [](const json&) {
        json r = reply("bind", {2}, 7);
        r["profile_unknown"] = true;
        return r;
    };
    UserOptions o;
    o.profile = "bert-larg";
    CHECK(w.place(bind_job(8), o).profile_unknown);
    CHECK(unknown_profile_line("bert-larg") ==
          "coloc: --coloc-profile 'bert-larg' is not a profile colocd knows; placed as 'default' (colocctl jobs shows "
          "it as default (unknown: bert-larg))");
    w.colocd = [](const json&) { return reply("bind", {1}, 9); };
    CHECK_FALSE(w.place(bind_job(9), o).profile_unknown);
}
