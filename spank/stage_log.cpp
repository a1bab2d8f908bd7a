#include "spank/stage_log.hpp"

#include <fcntl.h>
#include <unistd.h>
#include <cstdio>

namespace coloc::spank {

namespace {

std::string ms(double v) {
    if (v < 0) return "-";
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.2f", v);
    return buf;
}

// Slurm's step ids for the batch script and the interactive step, by name; others as numbers.
std::string step_name(std::uint32_t step) {
    if (step == 0xFFFFFFFBu) return "batch";
    if (step == 0xFFFFFFFAu) return "interactive";
    return std::to_string(step);
}

std::string subject(std::int64_t job_id, std::uint32_t step, const std::string& node) {
    return "job=" + std::to_string(job_id) + " step=" + step_name(step) + " node=" + node;
}

}  // namespace

std::string stage_line(std::int64_t job_id, std::uint32_t step, const std::string& node, const StageTimes& t,
                       double report_ms) {
    return subject(job_id, step, node) + " path=" + t.path + " lock=" + ms(t.lock_ms) + " lookup=" + ms(t.lookup_ms) +
           " munge=" + ms(t.munge_ms) + " call=" + ms(t.call_ms) + " record=" + ms(t.record_ms) +
           " place=" + ms(t.place_ms) + " fence=" + ms(t.fence_ms) + " report=" + ms(report_ms);
}

std::string apply_line(std::int64_t job_id, std::uint32_t step, const std::string& node, double apply_ms) {
    return subject(job_id, step, node) + " apply=" + ms(apply_ms);
}

void append_stage_line(const std::string& path, const std::string& line) {
    try {
        const int fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
        if (fd < 0) return;
        const std::string text = line + "\n";
        [[maybe_unused]] ssize_t n = ::write(fd, text.data(), text.size());
        ::close(fd);
    } catch (...) {}
}

}  // namespace coloc::spank
