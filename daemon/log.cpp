#include "daemon/log.hpp"

#include <cstdio>
#include <syslog.h>

namespace coloc::daemon {

namespace {
bool use_syslog = false;
LogLevel max_level = LogLevel::Info;
}  // namespace

void log_to_syslog() {
    openlog("colocd", LOG_PID, LOG_DAEMON);
    use_syslog = true;
}

void set_log_level(LogLevel level) { max_level = level; }

void log(LogLevel level, const std::string& message) {
    if (level > max_level) return;
    if (use_syslog) {
        int prio = level == LogLevel::Error ? LOG_ERR : level == LogLevel::Info ? LOG_INFO : LOG_DEBUG;
        syslog(prio, "coloc: %s", message.c_str());
    } else {
        std::fprintf(stderr, "coloc: %s\n", message.c_str());
        std::fflush(stderr);
    }
}

}  // namespace coloc::daemon
