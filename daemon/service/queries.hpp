// The service's query part: what colocctl reads (status, nodes, jobs, history, explain,
// metrics). Every authenticated user may ask; jobs, history and explain show a plain user only
// their own jobs. It writes nothing; the other parts lend it their status lines.
#pragma once

#include <cstdint>
#include <utility>

#include "daemon/metrics.hpp"
#include "daemon/service/access.hpp"
#include "daemon/service/state.hpp"
#include "proto/auth.hpp"
#include "proto/envelope.hpp"

namespace coloc::daemon {

class GroupCommit;
class Learning;
class Reconciliation;
class SlotSizing;

class Queries {
public:
    // The parts whose state status, explain and metrics show.
    struct Sources {
        const Learning& learning;
        const Reconciliation& reconciliation;
        const SlotSizing& sizing;
        const GroupCommit& commits;
    };
    Queries(State& state, const Access& access, Sources parts);

    proto::json on_status(const proto::Request& req, const proto::Identity& who);
    proto::json on_nodes(const proto::Request& req, const proto::Identity& who);
    proto::json on_jobs(const proto::Request& req, const proto::Identity& who);
    proto::json on_history(const proto::Request& req, const proto::Identity& who);
    proto::json on_explain(const proto::Request& req, const proto::Identity& who);
    proto::json on_metrics(const proto::Request& req, const proto::Identity& who);

    // What `colocctl metrics` and the HTTP endpoint show.
    MetricsSnapshot metrics() const;

private:
    std::pair<std::int64_t, std::int64_t> slot_totals() const;  // GPU slots in all, in use
    proto::json job_json(const JobRow& job);
    // What steering advised for a decision, as it was kept; null when nothing was.
    proto::json steering_advice_of(std::int64_t decision);
    // One line per node type, "gpu8: a100, 80 GB, parameters from FILE", and the fallbacks.
    void hardware_status(proto::json& status) const;

    State& state_;
    const Access& access_;
    Sources parts_;
};

}  // namespace coloc::daemon
