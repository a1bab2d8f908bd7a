#include "spank/exchange_util.hpp"

#include <sys/stat.h>

namespace coloc::spank {

int ms_left(Clock::time_point deadline) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    return left > 0 ? static_cast<int>(left) : 0;
}

std::string who(std::int64_t job_id, const std::string& node) {
    return "job " + std::to_string(job_id) + " on " + node;
}

std::string who(const JobFacts& f) { return who(f.job_id, f.node); }

void log_once(const Services& services, const std::string& subject, const std::vector<std::string>& notes) {
    if (notes.empty() || !services.log) return;
    try {
        std::string line = subject + ": ";
        for (std::size_t i = 0; i < notes.size(); ++i) line += (i ? "; " : "") + notes[i];
        services.log(line);
    } catch (...) {}
}

bool endpoint_absent(const std::string& endpoint) {
    if (endpoint.rfind("ipc://", 0) != 0) return false;
    struct stat st {};
    return ::stat(endpoint.c_str() + 6, &st) != 0;
}

}  // namespace coloc::spank
