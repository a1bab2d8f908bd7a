#include "daemon/slurm_jobs.hpp"

#include <cerrno>
#include <cstdlib>
#include <ctime>
#include <mutex>
#include <stdexcept>
#include <sys/stat.h>
#include <sys/wait.h>

extern "C" {
#include <slurm/slurm.h>
#include <slurm/slurm_errno.h>
}

#include "daemon/hostlist.hpp"
#include "daemon/slurm_session.hpp"

namespace coloc::daemon {

namespace {

// "0-1,3" -> {0, 1, 3}; garbage gives what could be read.
std::vector<int> parse_index_ranges(const std::string& text) {
    std::vector<int> out;
    std::size_t i = 0;
    while (i < text.size()) {
        char* end = nullptr;
        long a = std::strtol(text.c_str() + i, &end, 10);
        if (end == text.c_str() + i) break;
        i = static_cast<std::size_t>(end - text.c_str());
        long b = a;
        if (i < text.size() && text[i] == '-') {
            b = std::strtol(text.c_str() + i + 1, &end, 10);
            i = static_cast<std::size_t>(end - text.c_str());
        }
        for (long g = a; g <= b && g - a < 1024; ++g) out.push_back(static_cast<int>(g));
        if (i < text.size() && text[i] == ',') ++i;
    }
    return out;
}

// Top-level items of a gres detail string: commas inside parentheses belong to IDX lists.
std::vector<std::string> split_items(const std::string& detail) {
    std::vector<std::string> items;
    std::string cur;
    int depth = 0;
    for (char c : detail) {
        if (c == '(') ++depth;
        if (c == ')') --depth;
        if (c == ',' && depth == 0) {
            items.push_back(cur);
            cur.clear();
        } else {
            cur += c;
        }
    }
    if (!cur.empty()) items.push_back(cur);
    return items;
}

}  // namespace

SlurmJobNode parse_gres_detail(const std::string& node, const std::string& detail) {
    SlurmJobNode out;
    out.node = node;
    for (const std::string& item : split_items(detail)) {
        const std::string head = item.substr(0, item.find('('));
        const std::string name = head.substr(0, head.find(':'));
        if (name != "gpu" && name != "gpuslot") continue;
        // The count is the last ':'-field of the head ("gpu:a100:2").
        const auto colon = head.rfind(':');
        const int count = colon == std::string::npos ? 0 : std::atoi(head.c_str() + colon + 1);
        if (name == "gpu") {
            if (auto idx = item.find("(IDX:"); idx != std::string::npos)
                out.gpus = parse_index_ranges(item.substr(idx + 5, item.find(')', idx) - idx - 5));
            out.gpu_count = count > 0 ? count : static_cast<int>(out.gpus.size());
        } else if (out.gpu_count == 0) {
            out.gpu_count = count;
        }
    }
    return out;
}

SlurmSnapshot load_slurm_jobs() {
    init_libslurm();
    job_info_msg_t* msg = nullptr;
    if (slurm_load_jobs(0, &msg, SHOW_ALL) != SLURM_SUCCESS)
        throw std::runtime_error(std::string("slurm_load_jobs: ") + slurm_strerror(slurm_get_errno()));
    SlurmSnapshot snap;
    snap.taken_at = static_cast<std::int64_t>(std::time(nullptr));
    for (std::uint32_t i = 0; i < msg->record_count; ++i) {
        const slurm_job_info_t& j = msg->job_array[i];
        SlurmJob job;
        job.job_id = j.job_id;
        job.uid = j.user_id;
        job.name = j.name ? j.name : "";
        job.partition = j.partition ? j.partition : "";
        const std::uint32_t base = j.job_state & JOB_STATE_BASE;
        job.running = base == JOB_RUNNING || base == JOB_SUSPENDED;
        job.start_time = base == JOB_PENDING ? 0 : static_cast<std::int64_t>(j.start_time);
        if (!job.running && base != JOB_PENDING) {
            job.end_time = static_cast<std::int64_t>(j.end_time);
            if (WIFEXITED(j.exit_code)) job.exit_status = WEXITSTATUS(j.exit_code);
            else if (WIFSIGNALED(j.exit_code)) job.exit_status = 128 + WTERMSIG(j.exit_code);
        }
        if (j.nodes && *j.nodes) {
            auto names = expand_hostlist(j.nodes);
            if (names)
                for (std::size_t n = 0; n < names->size(); ++n) {
                    const char* detail = n < j.gres_detail_cnt && j.gres_detail_str ? j.gres_detail_str[n] : nullptr;
                    job.nodes.push_back(parse_gres_detail((*names)[n], detail ? detail : ""));
                }
        }
        snap.jobs.push_back(std::move(job));
    }
    slurm_free_job_info_msg(msg);
    return snap;
}

}  // namespace coloc::daemon
