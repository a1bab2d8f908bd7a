// The C API of coloc_report.h over one process-wide Reporter. Nothing here throws across the C
// boundary: a failure turns reporting off.
#include "client/coloc_report.h"

#include <unistd.h>
#include <atomic>
#include <cstdio>
#include <memory>
#include <mutex>

#include "client/reporter.hpp"

namespace {

std::mutex g_mu;
coloc::client::Reporter* g_reporter = nullptr;
// Read before g_mu: a forked child returns at once, even where the fork came while another thread
// of the parent held g_mu.
std::atomic<pid_t> g_owner{0};

// Stops the current reporter; in a forked child it is the parent's, and left alone.
void stop_locked() {
    if (!g_reporter) return;
    if (getpid() == g_owner) {
        g_reporter->close();
        delete g_reporter;
    }
    g_reporter = nullptr;
}

void stop_at_exit() {
    try {
        std::lock_guard lock(g_mu);
        stop_locked();
    } catch (...) {}
}

}  // namespace

extern "C" {

int coloc_report_init(void) {
    try {
        std::lock_guard lock(g_mu);
        stop_locked();
        std::string why;
        auto settings = coloc::client::settings_from_env(why);
        if (!settings) {
            if (!why.empty()) std::fprintf(stderr, "coloc: iteration times are not reported: %s\n", why.c_str());
            return 0;
        }
        static const bool registered = (std::atexit(stop_at_exit), true);
        (void)registered;
        g_reporter = new coloc::client::Reporter(std::move(*settings));
        g_owner = getpid();
        return 1;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "coloc: iteration times are not reported: %s\n", e.what());
    } catch (...) {}
    return 0;
}

void coloc_report_iteration(double seconds) {
    if (getpid() != g_owner.load(std::memory_order_relaxed)) return;
    try {
        std::lock_guard lock(g_mu);
        if (g_reporter) g_reporter->iteration(seconds);
    } catch (...) {}
}

void coloc_report_flush(void) {
    if (getpid() != g_owner.load(std::memory_order_relaxed)) return;
    try {
        std::lock_guard lock(g_mu);
        if (g_reporter) g_reporter->flush();
    } catch (...) {}
}

void coloc_report_close(void) {
    try {
        std::lock_guard lock(g_mu);
        stop_locked();
    } catch (...) {}
}

}  // extern "C"
