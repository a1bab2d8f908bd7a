// colocd's side of admission (daemon/steering/admission.hpp): the admin switch
// (`colocctl admission on|off`), what it holds and why, and the release of every held job when
// colocd stops. The rounds themselves run in elastic_ops.cpp's size_slots, from the same read
// of Slurm's queue.
#include <ctime>
#include <filesystem>

#include "base/files.hpp"
#include "daemon/log.hpp"
#include "daemon/service/slot_sizing.hpp"
#include "proto/fields.hpp"

namespace coloc::daemon {

using proto::json;

namespace {

std::int64_t now_s() { return static_cast<std::int64_t>(std::time(nullptr)); }

}  // namespace

SlotSizing::~SlotSizing() {
    publish_offers(std::nullopt);
    submit_to_slurm(admission_.release_all(now_s()));
}

void SlotSizing::publish_offers(const std::optional<std::string>& text) {
    const std::string& path = admission_.config().offers_file;
    if (path.empty()) return;
    std::error_code ec;
    if (!text) {  // gone, so that no job takes an offer colocd no longer stands by
        if (offers_written_) std::filesystem::remove(path, ec);
        offers_written_ = false;
        offers_.clear();
        offers_as_of_ = 0;
        return;
    }
    std::filesystem::create_directories(std::filesystem::path(path).parent_path(), ec);
    const std::string why = base::replace_file(path, *text, 0644);  // slurmctld's user reads it
    if (why.empty()) {
        offers_written_ = true;
        if (!offers_error_.empty()) log_info("admission: standing offers written again to " + path);
    } else if (why != offers_error_) {
        log_error("admission: standing offers not written (every bind job waits for a round): " + why);
    }
    offers_error_ = why;
}

void SlotSizing::submit_to_slurm(std::vector<JobUpdate> updates) {
    if (updates.empty()) return;
    if (!node_writer_) node_writer_ = std::make_unique<SlurmNodeWriter>();
    node_writer_->submit(std::move(updates));
}

json SlotSizing::admission_json() const {
    json held = json::array();
    for (const AdmissionVerdict& v : admission_.verdicts())
        if (v.gated)
            held.push_back({{"job_id", v.id},
                            {"uid", v.uid},
                            {"released", v.release},
                            {"node", v.node},
                            {"why", v.why},
                            {"explores", v.explores}});
    json out = {{"enabled", admission_.enabled()},
                {"active", admission_on()},
                {"interval_s", admission_.config().interval_s},
                {"watch_ms", admission_.config().watch_ms},
                {"watches", slurm_jobs_.watches()},
                {"lease_s", admission_.config().lease_s},
                {"rounds", admission_.rounds()},
                {"released", admission_.released()},
                {"held", admission_.held()},
                {"last_round", admission_.last_round_s()},
                {"pending", held},
                {"last_error", queue_error_}};
    // The arrivals the rule expects: bind jobs per hour, counted over the window's epochs
    // (counted_s long), trusted as far ahead as colocd has watched (seen_s).
    const place::ArrivalRates arrivals = submitted_.rates(static_cast<double>(now_s()));
    out["arrivals"] = {{"window_s", admission_.config().arrival_window_s},
                       {"counted_s", arrivals.counted_s},
                       {"seen_s", arrivals.seen_s},
                       {"jobs_per_hour", arrivals.jobs_per_s * 3600}};
    // The standing offers of the latest round (none while a job is held).
    json offered = json::array();
    for (const StandingOffer& o : offers_)
        offered.push_back(
            {{"node", state_.cfg.topology.nodes()[static_cast<std::size_t>(o.node)].name}, {"gpus", o.gpus}});
    out["offers"] = {{"file", admission_.config().offers_file},
                     {"written", offers_written_},
                     {"as_of", offers_as_of_},
                     {"nodes", offered},
                     {"error", offers_error_}};
    // Exploration's account: the rule's decisions weighed and, of them, pairings tried although
    // only the margin held them (at most share x weighed).
    const place::ExplorationBudget& e = admission_.exploration_account();
    out["exploration"] = {{"share", e.share}, {"weighed", e.weighed}, {"explored", e.explored}};
    if (node_writer_) {
        const auto st = node_writer_->status();
        out["slurm_updates_sent"] = st.jobs_sent;
        out["slurm_updates_failed"] = st.jobs_failed;
    }
    return out;
}

// {"op":"admission"} reads; {"op":"admission","enabled":true|false} switches (admins only: the
// route table's admin_field). Switching off answers once Slurm has every held job released (or
// after 5 s).
json SlotSizing::on_admission(const proto::Request& req, const proto::Identity& who) {
    if (req.body.contains("enabled")) {
        const bool on = proto::get_bool_or(req.body, "enabled", false);
        if (admission_.enabled() != on) log_info(std::string("admission switched ") + (on ? "on" : "off"));
        submit_to_slurm(admission_.set_enabled(on, now_s()));
        if (!on && node_writer_) node_writer_->flush(5000);
    }
    json out = admission_json();
    if (!access_.is_admin(who.uid)) {  // a plain user sees the verdicts on their own jobs only
        json mine = json::array();
        for (const json& v : out["pending"])
            if (access_.may_see(v["uid"].get<std::int64_t>(), who.uid)) mine.push_back(v);
        out["pending"] = mine;
    }
    return {{"admission", out}};
}

json SlotSizing::admission_verdict_of(std::int64_t job_id, const proto::Identity& who) const {
    const AdmissionVerdict* v = admission_.verdict_of(job_id);
    if (!v || !access_.may_see(v->uid, who.uid)) return nullptr;
    return {{"released", v->release}, {"node", v->node}, {"why", v->why}};
}

}  // namespace coloc::daemon
