#include <doctest/doctest.h>

#include <unistd.h>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <thread>

#include "spank/bounded_child.hpp"

using namespace coloc::spank;
using namespace std::chrono_literals;

TEST_CASE("spank: a child's lines come back when it finishes in time") {
    ChildResult r = run_in_child(Clock::now() + 2s, [](const Emit& emit) {
        emit("one");
        emit("two");
    });
    CHECK(r.finished);
    CHECK(r.failure.empty());
    CHECK(r.lines == std::vector<std::string>{"one", "two"});
}

TEST_CASE("spank: a stuck child is killed at the deadline, keeping what it said before") {
    auto t0 = Clock::now();
    ChildResult r = run_in_child(t0 + 100ms, [](const Emit& emit) {
        emit("slots");
        std::this_thread::sleep_for(10s);
        emit("never");
    });
    auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - t0).count();
    CHECK_FALSE(r.finished);
    CHECK(r.failure == "killed at the deadline");
    CHECK(r.lines == std::vector<std::string>{"slots"});
    CHECK(ms >= 100);
    CHECK(ms < 300);
}

TEST_CASE("spank: an exception or a signal in the child is a failure, not a crash") {
    ChildResult thrown = run_in_child(Clock::now() + 2s, [](const Emit&) { throw std::runtime_error("x"); });
    CHECK_FALSE(thrown.finished);
    CHECK(thrown.failure == "exited with status 1");
    ChildResult killed = run_in_child(Clock::now() + 2s, [](const Emit&) { ::raise(SIGTERM); });
    CHECK_FALSE(killed.finished);
    CHECK(killed.failure == "died of signal 15");
}

TEST_CASE("spank: detached work runs on after the call returns and ends at its limit") {
    std::string mark = "/tmp/coloc-spank-detached-" + std::to_string(::getpid());
    std::filesystem::remove(mark);
    auto t0 = Clock::now();
    CHECK(run_detached(150, [&] {
              std::ofstream(mark) << ::getpid() << "\n";
              std::this_thread::sleep_for(10s);
              std::ofstream(mark, std::ios::app) << "not killed\n";
          }).empty());
    CHECK(Clock::now() - t0 < 100ms);
    pid_t pid = 0;
    for (int i = 0; i < 100 && pid == 0; ++i) {
        std::this_thread::sleep_for(10ms);
        std::ifstream(mark) >> pid;
    }
    REQUIRE(pid > 0);
    std::this_thread::sleep_for(400ms);
    // Gone, or a zombie waiting for whoever adopted it: either way no longer running.
    std::string state = "gone";
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    std::string ignore;
    if (stat >> ignore >> ignore >> state) {}
    CHECK((state == "gone" || state == "Z"));
    std::ifstream in(mark);
    std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    CHECK(all.find("not killed") == std::string::npos);
    std::filesystem::remove(mark);
}
