// colocd's log: `coloc: ` lines on stderr in the foreground, syslog when daemonised.
#pragma once

#include <string>

namespace coloc::daemon {

enum class LogLevel { Error = 0, Info = 1, Debug = 2 };

void log_to_syslog();
void set_log_level(LogLevel level);
void log(LogLevel level, const std::string& message);
inline void log_error(const std::string& m) { log(LogLevel::Error, m); }
inline void log_info(const std::string& m) { log(LogLevel::Info, m); }
inline void log_debug(const std::string& m) { log(LogLevel::Debug, m); }

}  // namespace coloc::daemon
