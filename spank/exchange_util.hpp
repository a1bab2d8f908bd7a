// Small pieces shared by the place request and the reports: deadlines, the one log line, and
// telling at once that colocd is not running.
#pragma once

#include <string>
#include <vector>

#include "spank/bounded_child.hpp"
#include "spank/placement.hpp"

namespace coloc::spank {

int ms_left(Clock::time_point deadline);

// "job 12 on n1", the subject of every log line about a job.
std::string who(const JobFacts& f);
std::string who(std::int64_t job_id, const std::string& node);

// Logs `notes` as one line, "subject: note; note"; nothing when there is no note. Never throws.
void log_once(const Services& services, const std::string& subject, const std::vector<std::string>& notes);

// An ipc:// endpoint whose socket file is missing has no daemon behind it: say so at once
// instead of waiting out the deadline (ZeroMQ would keep retrying the connect).
bool endpoint_absent(const std::string& endpoint);

}  // namespace coloc::spank
