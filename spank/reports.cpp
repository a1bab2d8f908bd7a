#include "spank/placement.hpp"

#include <algorithm>

#include "proto/errors.hpp"
#include "proto/messages.hpp"
#include "spank/bounded_child.hpp"
#include "spank/exchange_util.hpp"
#include "spank/local_state.hpp"

// The `started` and `ended` reports (declared in placement.hpp, beside the place request).
namespace coloc::spank {

using json = nlohmann::json;

void report_started(const PluginConfig& config, const JobFacts& facts, const Outcome& outcome,
                    const Services& services) {
    try {
        if (!outcome.report_started || endpoint_absent(config.endpoint)) return;
        proto::StartedReport r;
        r.job_id = facts.job_id;
        r.job_uid = facts.uid;
        r.node = facts.node;
        r.decision = outcome.decision;
        r.gpus = outcome.gpus;
        r.time = services.now();
        // Fire and forget: the tasks are waiting to exec while this callback runs, and a slow
        // colocd must not hold them back. A report that fails is logged by the child.
        const bool local = outcome.decision == 0;
        // A local choice was made because colocd was slow: its report may wait longer, as
        // nothing waits for it, and what colocd took is no longer carried by place requests.
        const int budget = local ? std::max(config.timeout_ms, kLocalReportMs) : config.timeout_ms;
        const std::string subject = who(facts);
        std::string why = run_detached(budget + kKillMarginMs, [&] {
            try {
                services.call(config.endpoint, r.to_json(), {config.munge_socket, budget});
            } catch (const std::exception& e) {
                log_once(services, subject, {std::string("started report not delivered: ") + e.what()});
                return;
            }
            if (!local) return;
            try {
                StateFile(config.state_dir, facts.node).update(kLockWaitMs, [&](NodeState& s) {
                    const Holding* h = s.find(facts.job_id);
                    if (!h || h->reported || h->decision != 0) return false;
                    mark_reported(s, {{.job_id = h->job_id, .gpus = h->gpus, .since = h->since}});
                    return true;
                });
            } catch (const StateError&) {
                // Still unreported: the next place request carries it, and colocd takes it again as the same.
            }
        });
        if (!why.empty()) log_once(services, subject, {"started report not sent: " + why});
    } catch (...) {}
}

namespace {

constexpr std::size_t kMaxPerEpilog = 32;

// The ends colocd has not heard of, this job's first when it ran here (`own`).
struct Ends {
    std::vector<Holding> to_send;
    bool own = false;
};

// Ends the job's holding under the node lock (freeing its slots) and collects the ends to send.
// Throws StateError when the lock or the file cannot be used.
Ends end_here(const StateFile& state, std::int64_t job_id, std::int64_t now, int exit_status) {
    Ends ends;
    state.update(kEpilogLockWaitMs, [&](NodeState& s) {
        const bool had = s.find(job_id) != nullptr;
        if (auto ended = end_job(s, job_id, now, exit_status)) {
            ends.to_send.push_back(*ended);
            ends.own = true;
        }
        for (const Holding& h : s.holdings)
            if (!h.active() && ends.to_send.size() < kMaxPerEpilog &&
                !(ends.own && h.job_id == job_id && h.ended == ends.to_send[0].ended))
                ends.to_send.push_back(h);
        return had;
    });
    return ends;
}

// The end left as a note when the lock cannot be used: the next step to take the lock frees
// the job's slots and carries the end to colocd. Says what became of it.
std::string leave_end_note(const StateFile& state, std::int64_t job_id, std::int64_t now, int exit_status) {
    Holding end{.job_id = job_id, .mode = HoldingMode::Bind, .since = now};
    end.ended = std::max<std::int64_t>(now, 1);
    end.exit_status = exit_status;
    try {
        state.leave_note(end);
    } catch (const StateError& n) {
        return std::string("lost: ") + n.what();
    }
    return "left as a note for the next step";
}

struct Delivery {
    std::vector<bool> delivered;  // one for each end sent, in order
    std::string why;              // why the rest were not
};

// Sends the ends from a child killed at the deadline, in order, stopping at the first that
// colocd could not take.
Delivery deliver(const PluginConfig& config, const std::string& node, const std::vector<Holding>& to_send,
                 const Services& services) {
    const auto deadline = Clock::now() + std::chrono::milliseconds(config.timeout_ms);
    ChildResult c;
    if (!endpoint_absent(config.endpoint)) {
        c = run_in_child(deadline + std::chrono::milliseconds(kKillMarginMs), [&](const Emit& emit) {
            auto send = [&](const json& body) {
                int budget = ms_left(deadline) - kReplyMarginMs;
                if (budget <= 0) throw proto::ProtoError(proto::code::kUnavailable, "no time left");
                try {
                    services.call(config.endpoint, body, {config.munge_socket, budget});
                } catch (const proto::ProtoError& e) {
                    // A refusal is an answer: sending it again would not help.
                    if (e.code() == proto::code::kUnavailable || e.code() == proto::code::kInternal) throw;
                }
            };
            for (std::size_t i = 0; i < to_send.size(); ++i) {
                const Holding& h = to_send[i];
                try {
                    // colocd adopts a placement it never heard of from a `started` without a decision.
                    if (!h.reported)
                        send(proto::StartedReport{.job_id = h.job_id,
                                                  .job_uid = -1,
                                                  .node = node,
                                                  .decision = 0,
                                                  .gpus = h.gpus,
                                                  .time = h.since}
                                 .to_json());
                    send(proto::EndedReport{.job_id = h.job_id,
                                            .node = node,
                                            .exit_status = h.exit_status,
                                            .elapsed_s = h.elapsed_s,
                                            .time = h.ended}
                             .to_json());
                } catch (const std::exception& e) {
                    emit("stop " + std::string(e.what()));
                    return;
                }
                emit("delivered " + std::to_string(i));
            }
        });
    } else {
        c.lines.push_back("stop colocd is not running (" + config.endpoint + " does not exist)");
    }
    Delivery d{std::vector<bool>(to_send.size(), false), c.failure};
    for (const std::string& line : c.lines) {
        if (line.rfind("delivered ", 0) == 0) {
            std::size_t i = std::stoul(line.substr(10));
            if (i < d.delivered.size()) d.delivered[i] = true;
        } else if (line.rfind("stop ", 0) == 0) {
            d.why = line.substr(5);
        }
    }
    return d;
}

// What colocd took is forgotten here; the rest stays for the next place request or epilog.
void forget_delivered(const StateFile& state, const std::vector<Holding>& to_send, const std::vector<bool>& delivered) {
    std::vector<proto::LocalPlacement> done;
    for (std::size_t i = 0; i < to_send.size(); ++i)
        if (delivered[i])
            done.push_back({.job_id = to_send[i].job_id,
                            .gpus = to_send[i].gpus,
                            .since = to_send[i].since,
                            .ended = to_send[i].ended});
    if (done.empty()) return;
    try {
        state.update(kEpilogLockWaitMs, [&](NodeState& s) {
            mark_reported(s, done);
            return true;
        });
    } catch (const StateError&) {
        // Sent again later; colocd takes a repeated end as the same end.
    }
}

}  // namespace

void report_ended(const PluginConfig& config, std::int64_t job_id, const std::string& node,
                  std::optional<int> exit_code, const Services& services) {
    const std::string subject = who(job_id, node);
    try {
        if (job_id <= 0) return;
        const StateFile state(config.state_dir, node);
        const std::int64_t now = services.now();
        const int exit_status = exit_code.value_or(-1);
        Ends ends;
        try {
            ends = end_here(state, job_id, now, exit_status);
        } catch (const StateError& e) {
            log_once(services, subject,
                     {std::string("ended: node-local state unusable: ") + e.what() + "; the end " +
                      leave_end_note(state, job_id, now, exit_status)});
            return;
        }
        if (ends.to_send.empty()) return;
        const Delivery d = deliver(config, node, ends.to_send, services);
        forget_delivered(state, ends.to_send, d.delivered);
        if (ends.own && !d.delivered[0])
            log_once(services, subject,
                     {"ended report not delivered (" + d.why + "); kept for the next place request or epilog"});
    } catch (...) {
        log_once(services, subject, {"ended report failed unexpectedly"});
    }
}

}  // namespace coloc::spank
