// Learned profiles: what jobs that ran alone took becomes their profile's solo truth, or a
// profile of their own (their user and job name) when they name no catalogued one.
#include <cmath>

#include "daemon/log.hpp"
#include "daemon/service/learning.hpp"

namespace coloc::daemon {

using proto::json;

void Learning::load_solo_runs() {
    state_.learned.clear();
    for (const SoloRunWrite& r : state_.store.solo_runs()) {
        const model::SoloKey key{r.key, r.learned};
        if (r.iter_time_s) state_.learned.record_iter_time(key, r.job_id, *r.iter_time_s);
        if (r.runtime_s) state_.learned.record_runtime(key, r.job_id, *r.runtime_s);
    }
}

// A report with no neighbour at all is a solo iteration time.
void Learning::record_solo_iter_time(const JobRow& job, double iter_time_s, std::int64_t now) {
    const auto key = model::solo_key(state_.catalogue, job.profile, job.user, job.job_name);
    if (!key) return;
    SoloRunWrite w{.key = key->name,
                   .learned = key->learned,
                   .job_id = job.job_id,
                   .time = now,
                   .iter_time_s = iter_time_s,
                   .runtime_s = std::nullopt};
    state_.store.record_solo_run(w);
    state_.learned.record_iter_time(*key, job.job_id, iter_time_s);
}

// A job that ended well and never shared anything with another job (no co-location interval
// at any level) ran alone: its elapsed time is a solo runtime. Failed jobs and jobs colocd did
// not see start and end are left out.
void Learning::record_solo_runtime(const JobRow& row, const std::vector<ColocationRow>& shared, std::int64_t now) {
    const JobRow* job = &row;
    const std::int64_t job_id = row.job_id;
    if (job->state != JobState::Ended || job->exit_status.value_or(-1) != 0 || !job->elapsed_s ||
        !std::isfinite(*job->elapsed_s) || *job->elapsed_s <= 0)
        return;
    if (!shared.empty()) return;
    const auto key = model::solo_key(state_.catalogue, job->profile, job->user, job->job_name);
    if (!key) return;
    SoloRunWrite w{.key = key->name,
                   .learned = key->learned,
                   .job_id = job_id,
                   .time = now,
                   .iter_time_s = std::nullopt,
                   .runtime_s = *job->elapsed_s};
    state_.store.record_solo_run(w);
    state_.learned.record_runtime(*key, job_id, *job->elapsed_s);
}

namespace {

std::string runs_text(int runs) {
    return "learned from " + std::to_string(runs) + (runs == 1 ? " solo run" : " solo runs");
}

}  // namespace

// Each figure says where it came from: solo runs, the catalogue, or the documented default.
json Learning::on_profiles(const proto::Request&, const proto::Identity&) {
    json rows = json::array();
    for (const model::LearnedProfiles::Entry& e : state_.learned.entries()) {
        const model::JobProfile& p = *e.profile;
        json row = {{"name", p.name}, {"kind", e.learned ? "learned" : "catalogue"}};
        if (e.iter_time) {
            row["iter_time_s"] = e.iter_time->mean;
            row["iter_time_from"] = runs_text(e.iter_time->runs);
        } else {
            row["iter_time_s"] = p.iter_time_s;
            row["iter_time_from"] = !e.learned && p.has("iter_time_s") ? "catalogue" : "default";
        }
        row["iter_time_runs"] = e.iter_time ? e.iter_time->runs : 0;
        row["runtime_s"] = e.runtime ? json(e.runtime->mean) : json(nullptr);
        row["runtime_from"] = e.runtime ? runs_text(e.runtime->runs) : "unknown";
        row["runtime_runs"] = e.runtime ? e.runtime->runs : 0;
        rows.push_back(std::move(row));
    }
    return {{"profiles", rows}};
}

}  // namespace coloc::daemon
