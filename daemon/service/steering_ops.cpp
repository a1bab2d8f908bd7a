// colocd's side of node steering: the rounds between requests, the admin switch
// (`colocctl steering on|off`), and what steering advised when each job landed (kept beside the
// decision, shown by `colocctl explain`).
#include <chrono>
#include <stdexcept>

#include "daemon/log.hpp"
#include "daemon/service/slot_sizing.hpp"
#include "proto/errors.hpp"
#include "proto/fields.hpp"

namespace coloc::daemon {

using proto::json;

namespace {

std::int64_t steady_ms() {
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

Steering make_steering(const Config& cfg, const model::ProfileCatalogue& catalogue) {
    try {
        return Steering(cfg.steering, catalogue, static_cast<int>(cfg.topology.nodes().size()));
    } catch (const std::invalid_argument& e) {
        throw ConfigError(cfg.path + ": " + e.what());
    }
}

// Nodes a steering round looks at per pass of colocd's loop: about 0.2 ms each on busy nodes
// (three probes), so a pass holds requests up for ~10 ms however large the cluster.
constexpr int kSteeringNodesPerCall = 64;

}  // namespace

SlotSizing::SlotSizing(State& state, const Access& access)
    : state_(state),
      access_(access),
      steering_(make_steering(state.cfg, state.catalogue)),
      elastic_(state.cfg.elastic, static_cast<int>(state.cfg.topology.nodes().size())),
      admission_(state.cfg.admission),
      slurm_jobs_(state.cfg.elastic.enabled || !state.cfg.admission.enabled ? state.cfg.elastic.interval_s
                                                                            : state.cfg.admission.interval_s,
                  // Watched for admission (and for releasing gated jobs with both levers off);
                  // elastic slots change node counts, which a watch would only make churn.
                  state.cfg.elastic.enabled ? 0 : state.cfg.admission.watch_ms),
      submitted_(state.cfg.admission.arrival_window_s) {}

void SlotSizing::run_due(std::int64_t now_ms) {
    steer(now_ms);
    size_slots(now_ms);
}

void SlotSizing::submit_to_slurm(std::vector<NodeUpdate> updates) {
    if (updates.empty()) return;
    if (!node_writer_) node_writer_ = std::make_unique<SlurmNodeWriter>();
    node_writer_->submit(std::move(updates));
}

void SlotSizing::steer(std::int64_t now_ms) {
    if (state_.cluster_version != steered_version_) {  // a job came or went: the next round recomputes
        steering_.mark_dirty();
        steered_version_ = state_.cluster_version;
    }
    try {
        submit_to_slurm(steering_.round(state_.cluster, state_.policy, *state_.model, now_ms, kSteeringNodesPerCall));
    } catch (const std::exception& e) {
        log_error("steering: " + std::string(e.what()));
    }
}

json SlotSizing::steering_json() const {
    json nodes = json::array();
    const auto& topo = state_.cfg.topology;
    for (std::size_t n = 0; n < topo.nodes().size(); ++n) {
        const auto& a = steering_.applied(static_cast<int>(n));
        if (!a) continue;
        nodes.push_back({{"node", topo.nodes()[n].name}, {"extra_weight", a->extra_weight}, {"features", a->features}});
    }
    json out = {{"enabled", steering_.enabled()},
                {"interval_s", steering_.config().interval_s},
                {"rounds", steering_.rounds()},
                {"updates", steering_.updates()},
                {"nodes", nodes}};
    if (node_writer_) {
        const auto st = node_writer_->status();
        out["slurm_updates_sent"] = st.sent;
        out["slurm_updates_failed"] = st.failed;
        out["last_error"] = st.last_error;
        json admin = json::array();
        for (const auto& [node, s] : st.admin)
            admin.push_back({{"node", node}, {"weight", s.weight}, {"features", s.features}});
        out["admin_settings"] = admin;
    }
    return out;
}

// {"op":"steering"} reads; {"op":"steering","enabled":true|false} switches (admins only: the
// route table's admin_field).
json SlotSizing::on_steering(const proto::Request& req, const proto::Identity&) {
    if (req.body.contains("enabled")) {
        const bool on = proto::get_bool_or(req.body, "enabled", false);
        if (steering_.enabled() != on) log_info(std::string("node steering switched ") + (on ? "on" : "off"));
        submit_to_slurm(steering_.set_enabled(on, state_.cfg.topology));
        if (on) steer(steady_ms());
        // Switching off answers once Slurm has the admin's settings back (or after 5 s).
        if (!on && node_writer_) node_writer_->flush(5000);
    }
    return {{"steering", steering_json()}};
}

std::optional<std::string> SlotSizing::advice_for(const std::string& node) const {
    if (!steering_.enabled()) return std::nullopt;
    const int here = state_.cfg.topology.node_index(node);
    if (here < 0) return std::nullopt;
    const std::optional<int> least = steering_.least_extra_weight();
    const auto& mine = steering_.applied(here);
    json advice = {{"extra_weight", mine ? mine->extra_weight : 0},
                   {"least_extra_weight", least.value_or(0)},
                   {"followed", !mine || !least || mine->extra_weight <= *least},
                   {"features", mine ? mine->features : std::vector<std::string>{}}};
    return advice.dump();
}

}  // namespace coloc::daemon
