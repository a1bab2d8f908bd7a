#include "daemon/log.hpp"

#include <syslog.h>
#include <unistd.h>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>

namespace coloc::daemon {

namespace {
bool use_syslog = false;
LogLevel max_level = LogLevel::Info;

// Without a syslog socket every syslog() call tries to connect again (a socket and a failed
// connect per line); the lines are lost either way, so look for the socket at most every 10 s.
// Several threads log: the two remembered values are atomics.
bool syslog_socket_present() {
    static std::atomic<std::int64_t> next_look_ms{0};
    static std::atomic<bool> present{true};
    const std::int64_t now =
        std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now().time_since_epoch())
            .count();
    if (now >= next_look_ms.load(std::memory_order_relaxed)) {
        next_look_ms.store(now + 10'000, std::memory_order_relaxed);
        present.store(::access("/dev/log", W_OK) == 0, std::memory_order_relaxed);
    }
    return present.load(std::memory_order_relaxed);
}
}  // namespace

void log_to_syslog() {
    openlog("colocd", LOG_PID, LOG_DAEMON);
    use_syslog = true;
}

void set_log_level(LogLevel level) { max_level = level; }

void log(LogLevel level, const std::string& message) {
    if (level > max_level) return;
    if (use_syslog) {
        if (!syslog_socket_present()) return;
        int prio = level == LogLevel::Error ? LOG_ERR : level == LogLevel::Info ? LOG_INFO : LOG_DEBUG;
        syslog(prio, "coloc: %s", message.c_str());
    } else {
        std::fprintf(stderr, "coloc: %s\n", message.c_str());
        std::fflush(stderr);
    }
}

}  // namespace coloc::daemon
