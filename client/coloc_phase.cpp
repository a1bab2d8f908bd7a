// coloc_report_align (coloc_report.h): one process-wide PhaseAligner, made at the first call from
// the environment. Nothing throws across the C boundary: a failure turns alignment off.
#include <time.h>
#include <cstdio>
#include <memory>
#include <mutex>

#include "client/coloc_report.h"
#include "client/phase_align.hpp"

namespace {

std::mutex g_mu;
bool g_read = false;
std::unique_ptr<coloc::client::PhaseAligner> g_aligner;

double wall_clock_s() {
    timespec ts{};
    clock_gettime(CLOCK_REALTIME, &ts);
    return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
}

}  // namespace

extern "C" double coloc_report_align(double period_s) {
    try {
        std::lock_guard lock(g_mu);
        if (!g_read) {
            g_read = true;
            std::string why;
            auto s = coloc::client::phase_settings_from_env(why);
            if (!why.empty()) std::fprintf(stderr, "coloc: iterations are not phase-aligned: %s\n", why.c_str());
            if (s) {
                if (s->period_s <= 0) s->period_s = period_s;  // colocd's period is the neighbours' too
                g_aligner = std::make_unique<coloc::client::PhaseAligner>(*s);
            }
        }
        if (!g_aligner) return 0;
        const double wait = g_aligner->wait_before_iteration(wall_clock_s());
        if (wait <= 0) return 0;
        timespec ts{};
        ts.tv_sec = time_t(wait);
        ts.tv_nsec = long((wait - double(ts.tv_sec)) * 1e9);
        while (nanosleep(&ts, &ts) != 0) {}
        return wait;
    } catch (...) {}
    return 0;
}
