#include <doctest/doctest.h>

#include <fcntl.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <random>

#include "spank/local_state.hpp"
#include "tests/unit/test_env.hpp"

using namespace coloc::spank;

namespace {

Holding bind_holding(std::int64_t job, std::vector<int> gpus, bool reported = true) {
    return Holding{.job_id = job,
                   .mode = HoldingMode::Bind,
                   .gpus = std::move(gpus),
                   .decision = reported ? job * 10 : 0,
                   .reported = reported,
                   .since = 1000 + job};
}

struct ScratchDir {
    std::string path = coloc::test::scratch("spank-state");
    ~ScratchDir() {
        std::error_code ec;
        std::filesystem::remove_all(path, ec);
    }
};

}  // namespace

TEST_CASE("spank: the local choice takes the least-occupied GPUs with a free slot") {
    NodeState s;
    CHECK(choose_local(s, 4, 2, 1).gpus == std::vector<int>{0});
    s.holdings.push_back(bind_holding(1, {0}));
    s.holdings.push_back(bind_holding(2, {1}));
    CHECK(choose_local(s, 4, 2, 1).gpus == std::vector<int>{2});
    CHECK(choose_local(s, 4, 2, 2).gpus == std::vector<int>{2, 3});
    s.holdings.push_back(bind_holding(3, {2, 3}));
    CHECK(choose_local(s, 4, 2, 3).gpus == std::vector<int>{0, 1, 2});
}

TEST_CASE("spank: colocd's GPUs are checked against the record: those without a free slot are named") {
    NodeState s;
    CHECK(full_gpus(s, {0, 1}, 4, 2).empty());
    s.holdings.push_back(bind_holding(1, {0}, false));  // a local choice colocd has not heard of
    CHECK(full_gpus(s, {0}, 4, 2).empty());             // one slot left
    s.holdings.push_back(bind_holding(2, {0, 1}));
    CHECK(full_gpus(s, {0}, 4, 2) == std::vector<int>{0});
    CHECK(full_gpus(s, {1, 0, 3}, 4, 2) == std::vector<int>{0});
    CHECK(full_gpus(s, {0}, 4, 3).empty());  // three slots per GPU
    Holding ended = bind_holding(3, {1});
    ended.ended = 2000;
    s.holdings.push_back(ended);  // an ended holding frees its slot
    s.holdings.push_back(bind_holding(4, {1}));
    CHECK(full_gpus(s, {1}, 4, 2) == std::vector<int>{1});
    CHECK(full_gpus(s, {7}, 4, 2).empty());  // out of range: check_reply refuses it, not this
}

TEST_CASE("spank: eight one-slot jobs fill four GPUs with two slots each, never three on one") {
    NodeState s;
    for (int job = 1; job <= 8; ++job) {
        LocalChoice c = choose_local(s, 4, 2, 1);
        REQUIRE(c.gpus.size() == 1);
        CHECK_FALSE(c.over_capacity);
        record(s, bind_holding(job, c.gpus, false));
    }
    CHECK(slot_use(s, 4) == std::vector<int>{2, 2, 2, 2});
    LocalChoice ninth = choose_local(s, 4, 2, 1);  // more than Slurm's count allows
    CHECK(ninth.over_capacity);
    CHECK(ninth.gpus.size() == 1);
}

TEST_CASE("spank: fewer GPUs than asked when only some have a free slot") {
    NodeState s;
    s.holdings.push_back(bind_holding(1, {0, 1, 2}));
    s.holdings.push_back(bind_holding(2, {0, 1, 2}));
    LocalChoice c = choose_local(s, 4, 2, 2);
    CHECK(c.gpus == std::vector<int>{3});
    CHECK(c.fewer);
    CHECK_FALSE(c.over_capacity);
}

TEST_CASE("spank: the local choice never goes above the slots in random arrivals and departures") {
    std::mt19937 rng(42);
    NodeState s;
    std::int64_t next_job = 1;
    for (int round = 0; round < 2000; ++round) {
        std::vector<std::int64_t> running;
        for (const Holding& h : s.holdings)
            if (h.active()) running.push_back(h.job_id);
        if (!running.empty() && rng() % 3 == 0) {
            end_job(s, running[rng() % running.size()], 2000, 0);
            continue;
        }
        int want = 1 + static_cast<int>(rng() % 3);
        std::vector<int> use = slot_use(s, 4);
        int free_gpus = 0;
        for (int u : use) free_gpus += u < 2;
        if (free_gpus == 0) continue;  // Slurm would not start the job
        LocalChoice c = choose_local(s, 4, 2, want);
        CHECK_FALSE(c.over_capacity);
        CHECK(c.gpus.size() == static_cast<std::size_t>(std::min(want, free_gpus)));
        record(s, bind_holding(next_job++, c.gpus, false));
        for (int u : slot_use(s, 4)) CHECK(u <= 2);
    }
}

TEST_CASE("spank: narrow and no-GPU holdings take no bind slot") {
    NodeState s;
    s.holdings.push_back(Holding{.job_id = 1, .mode = HoldingMode::Narrow, .gpus = {0, 1}, .decision = 5});
    s.holdings.push_back(Holding{.job_id = 2, .mode = HoldingMode::None});
    CHECK(slot_use(s, 2) == std::vector<int>{0, 0});
}

TEST_CASE("spank: unreported placements are carried until colocd took them") {
    NodeState s;
    record(s, bind_holding(1, {0}, false));
    record(s, bind_holding(2, {1}, true));
    record(s, bind_holding(3, {2}, false));
    auto sent = unreported(s);
    REQUIRE(sent.size() == 2);
    CHECK(sent[0].job_id == 1);
    CHECK(sent[0].gpus == std::vector<int>{0});
    CHECK(sent[0].since == 1001);
    CHECK(sent[0].ended == 0);
    CHECK(sent[1].job_id == 3);
    mark_reported(s, {sent[0]});
    REQUIRE(unreported(s).size() == 1);
    CHECK(unreported(s)[0].job_id == 3);

    for (int job = 10; job < 100; ++job) record(s, bind_holding(job, {0}, false));
    CHECK(unreported(s).size() == kMaxUnreported);
}

TEST_CASE("spank: a job's end frees its slots and waits as unreported until colocd heard of it") {
    NodeState s;
    record(s, bind_holding(1, {0}, true));
    record(s, bind_holding(2, {0}, false));
    CHECK(slot_use(s, 2) == std::vector<int>{2, 0});
    auto ended = end_job(s, 1, 1100, 3);
    REQUIRE(ended);
    CHECK(ended->ended == 1100);
    CHECK(ended->elapsed_s == doctest::Approx(99));
    CHECK(ended->exit_status == 3);
    CHECK(slot_use(s, 2) == std::vector<int>{1, 0});
    CHECK(s.find(1) == nullptr);
    CHECK_FALSE(end_job(s, 1, 1200, 0));  // ends once

    auto sent = unreported(s);
    REQUIRE(sent.size() == 2);  // the end of job 1 and the placement of job 2
    CHECK(sent[0].job_id == 1);
    CHECK(sent[0].ended == 1100);
    CHECK(sent[0].exit_status == 3);
    mark_reported(s, sent);
    REQUIRE(s.holdings.size() == 1);  // the delivered end is forgotten
    CHECK(s.holdings[0].job_id == 2);
    CHECK(s.holdings[0].reported);

    // A requeued job runs again beside its own undelivered end.
    record(s, bind_holding(7, {1}, true));
    end_job(s, 7, 1300, 0);
    Holding again = record(s, bind_holding(7, {0}, false));
    CHECK(again.gpus == std::vector<int>{0});
    REQUIRE(s.find(7));
    CHECK(s.find(7)->active());
}

TEST_CASE("spank: a job that held no GPU here ends without a trace") {
    NodeState s;
    record(s, Holding{.job_id = 4, .mode = HoldingMode::None, .since = 10});
    CHECK_FALSE(end_job(s, 4, 20, 0));
    CHECK(s.holdings.empty());
}

TEST_CASE("spank: a job's first holding wins") {
    NodeState s;
    Holding first = record(s, bind_holding(7, {1}));
    Holding second = record(s, bind_holding(7, {2}));
    CHECK(first.gpus == std::vector<int>{1});
    CHECK(second.gpus == std::vector<int>{1});
    CHECK(s.holdings.size() == 1);
}

TEST_CASE("spank: undelivered ends are kept up to a limit, oldest dropped first") {
    NodeState s;
    for (int job = 1; job < 400; ++job) {
        record(s, bind_holding(job, {0}, true));
        end_job(s, job, 2000 + job, 0);
    }
    CHECK(s.holdings.size() == kMaxEnded);
    CHECK(s.holdings.back().job_id == 399);
    CHECK(s.holdings.front().job_id == 400 - static_cast<int>(kMaxEnded));
}

TEST_CASE("spank: the state survives a JSON round trip; unreadable entries are skipped") {
    NodeState s;
    record(s, bind_holding(1, {0, 1}, false));
    record(s, Holding{.job_id = 2,
                      .mode = HoldingMode::Narrow,
                      .gpus = {3},
                      .decision = 9,
                      .keep_slurm = true,
                      .reported = false,
                      .since = 50});
    record(s, bind_holding(5, {2}, true));
    end_job(s, 5, 1100, 1);
    int skipped = -1;
    NodeState back = state_from_json(state_to_json(s), skipped);
    CHECK(skipped == 0);
    REQUIRE(back.holdings.size() == 3);
    CHECK(back.holdings[0].gpus == std::vector<int>{0, 1});
    CHECK_FALSE(back.holdings[0].reported);
    CHECK(back.holdings[1].keep_slurm);
    CHECK(back.holdings[1].decision == 9);
    CHECK(back.holdings[2].ended == 1100);
    CHECK(back.holdings[2].exit_status == 1);
    CHECK(back.holdings[2].elapsed_s == doctest::Approx(95));

    nlohmann::json j = state_to_json(s);
    j["holdings"].push_back({{"job_id", "x"}});
    j["holdings"].push_back(j["holdings"][0]);  // the same job running twice
    back = state_from_json(j, skipped);
    CHECK(skipped == 2);
    CHECK(back.holdings.size() == 3);
}

TEST_CASE("spank: holding modes keep their names in the record; an unknown one skips the entry") {
    const std::pair<HoldingMode, const char*> names[] = {{HoldingMode::None, "none"},
                                                         {HoldingMode::Bind, "bind"},
                                                         {HoldingMode::Narrow, "narrow"},
                                                         {HoldingMode::Observe, "observe"}};
    for (const auto& [mode, name] : names) {
        CAPTURE(name);
        CHECK(std::string(holding_mode_name(mode)) == name);
        CHECK(parse_holding_mode(name) == mode);
        NodeState s;
        record(s, Holding{.job_id = 3, .mode = mode});
        const nlohmann::json j = state_to_json(s);
        CHECK(j["holdings"][0]["mode"] == name);
        int skipped = -1;
        const NodeState back = state_from_json(j, skipped);
        CHECK(skipped == 0);
        REQUIRE(back.holdings.size() == 1);
        CHECK(back.holdings[0].mode == mode);
    }
    CHECK_FALSE(parse_holding_mode("auto").has_value());
    CHECK_FALSE(parse_holding_mode("").has_value());
    NodeState s;
    record(s, bind_holding(1, {0}));
    nlohmann::json j = state_to_json(s);
    j["holdings"][0]["mode"] = "spread";
    int skipped = -1;
    CHECK(state_from_json(j, skipped).holdings.empty());
    CHECK(skipped == 1);
}

TEST_CASE("spank: the state file persists per node, and a corrupt one starts afresh with a warning") {
    ScratchDir dir;
    StateFile n1(dir.path + "/sub", "n1");
    CHECK(n1.update(50, [](NodeState& s) {
                record(s, bind_holding(1, {0}));
                return true;
            }).empty());
    std::size_t seen = 0;
    StateFile(dir.path + "/sub", "n1").update(50, [&](NodeState& s) {
        seen = s.holdings.size();
        return false;
    });
    CHECK(seen == 1);
    StateFile(dir.path + "/sub", "n2").update(50, [&](NodeState& s) {
        seen = s.holdings.size();
        return false;
    });
    CHECK(seen == 0);

    std::ofstream(n1.data_path()) << "{not json";
    std::string warning = n1.update(50, [&](NodeState& s) {
        seen = s.holdings.size();
        return false;
    });
    CHECK(seen == 0);
    CHECK(warning.find("not valid JSON") != std::string::npos);
}

TEST_CASE("spank: a held lock makes the update give up at its deadline") {
    ScratchDir dir;
    StateFile f(dir.path, "n1");
    f.update(50, [](NodeState&) { return true; });
    int fd = ::open((dir.path + "/n1.lock").c_str(), O_RDWR);
    REQUIRE(fd >= 0);
    REQUIRE(::flock(fd, LOCK_EX) == 0);
    auto t0 = std::chrono::steady_clock::now();
    CHECK_THROWS_AS(f.update(30, [](NodeState&) { return true; }), StateError);
    auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0).count();
    CHECK(ms >= 30);
    CHECK(ms < 200);
    ::close(fd);
    CHECK_NOTHROW(f.update(30, [](NodeState&) { return true; }));
}

TEST_CASE("spank: notes left while the lock is busy are merged by the next update, then removed") {
    ScratchDir dir;
    StateFile f(dir.path, "n1");
    f.update(50, [](NodeState& s) {
        record(s, bind_holding(3, {2}));
        return true;
    });
    int fd = ::open((dir.path + "/n1.lock").c_str(), O_RDWR);
    REQUIRE(fd >= 0);
    REQUIRE(::flock(fd, LOCK_EX) == 0);
    CHECK_THROWS_AS(f.update(10, [](NodeState&) { return true; }), StateError);
    f.leave_note(bind_holding(7, {1}, false));  // a choice made without the lock
    Holding end = bind_holding(3, {});
    end.ended = 1100;
    end.exit_status = 2;
    f.leave_note(end);                     // an epilog that could not wait longer
    CHECK(f.peek().holdings.size() == 1);  // notes are not the state yet
    ::close(fd);

    NodeState seen;
    f.update(50, [&](NodeState& s) {
        seen = s;
        return false;
    });  // merged even when fn writes nothing
    REQUIRE(seen.holdings.size() == 2);
    const Holding* seven = seen.find(7);
    REQUIRE(seven != nullptr);
    CHECK_FALSE(seven->reported);
    CHECK(seven->gpus == std::vector<int>{1});
    CHECK(seen.find(3) == nullptr);  // job 3 ended: its slot is free, its end waits for colocd
    CHECK(unreported(seen).size() == 2);
    CHECK(slot_use(seen, 4) == std::vector<int>{0, 1, 0, 0});
    CHECK(std::filesystem::is_empty(f.notes_dir()));
    f.update(50, [&](NodeState& s) {
        seen = s;
        return false;
    });
    CHECK(seen.holdings.size() == 2);  // stored, and not merged twice
}

TEST_CASE("spank: eight processes choosing at once under the lock never share beyond the slots") {
    ScratchDir dir;
    std::vector<pid_t> kids;
    for (int job = 1; job <= 8; ++job) {
        pid_t pid = ::fork();
        REQUIRE(pid >= 0);
        if (pid == 0) {
            int rc = 0;
            try {
                StateFile(dir.path, "n1").update(2000, [&](NodeState& s) {
                    LocalChoice c = choose_local(s, 4, 2, 1);
                    ::usleep(2000);  // widen the window a missing lock would expose
                    record(s, bind_holding(job, c.gpus, false));
                    return true;
                });
            } catch (...) {
                rc = 1;
            }
            ::_exit(rc);
        }
        kids.push_back(pid);
    }
    for (pid_t pid : kids) {
        int status = 0;
        ::waitpid(pid, &status, 0);
        CHECK(WIFEXITED(status));
        CHECK(WEXITSTATUS(status) == 0);
    }
    NodeState final_state;
    StateFile(dir.path, "n1").update(50, [&](NodeState& s) {
        final_state = s;
        return false;
    });
    CHECK(final_state.holdings.size() == 8);
    CHECK(slot_use(final_state, 4) == std::vector<int>{2, 2, 2, 2});
}
