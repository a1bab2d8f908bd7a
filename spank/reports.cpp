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
                    mark_reported(s, {{h->job_id, h->gpus, h->since, 0}});
                    return true;
                });
            } catch (const StateError&) {
                // Still unreported: the next place request carries it, and colocd takes it again as the same.
            }
        });
        if (!why.empty()) log_once(services, subject, {"started report not sent: " + why});
    } catch (...) {}
}

void report_ended(const PluginConfig& config, std::int64_t job_id, const std::string& node,
                  std::optional<int> exit_code, const Services& services) {
    const std::string subject = who(job_id, node);
    try {
        if (job_id <= 0) return;
        constexpr std::size_t kMaxPerEpilog = 32;
        const StateFile state(config.state_dir, node);
        const std::int64_t now = services.now();
        bool own = false;
        std::vector<Holding> to_send;  // ends colocd has not heard of; this job's first
        try {
            state.update(kEpilogLockWaitMs, [&](NodeState& s) {
                const bool had = s.find(job_id) != nullptr;
                if (auto ended = end_job(s, job_id, now, exit_code.value_or(-1))) {
                    to_send.push_back(*ended);
                    own = true;
                }
                for (const Holding& h : s.holdings)
                    if (!h.active() && to_send.size() < kMaxPerEpilog &&
                        !(own && h.job_id == job_id && h.ended == to_send[0].ended))
                        to_send.push_back(h);
                return had;
            });
        } catch (const StateError& e) {
            // Leave the end as a note: the next step to take the lock frees the job's slots and
            // carries the end to colocd.
            Holding end{job_id, holding_mode::kBind, {}, 0, false, true, now};
            end.ended = std::max<std::int64_t>(now, 1);
            end.exit_status = exit_code.value_or(-1);
            std::string kept = "left as a note for the next step";
            try {
                state.leave_note(end);
            } catch (const StateError& n) {
                kept = std::string("lost: ") + n.what();
            }
            log_once(services, subject,
                     {std::string("ended: node-local state unusable: ") + e.what() + "; the end " + kept});
            return;
        }
        if (to_send.empty()) return;

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
                        if (!h.reported) send(proto::StartedReport{h.job_id, -1, node, 0, h.gpus, h.since}.to_json());
                        send(proto::EndedReport{h.job_id, node, h.exit_status, h.elapsed_s, h.ended}.to_json());
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
        std::vector<bool> delivered(to_send.size(), false);
        std::string why = c.failure;
        for (const std::string& line : c.lines) {
            if (line.rfind("delivered ", 0) == 0) {
                std::size_t i = std::stoul(line.substr(10));
                if (i < delivered.size()) delivered[i] = true;
            } else if (line.rfind("stop ", 0) == 0) {
                why = line.substr(5);
            }
        }
        std::vector<proto::LocalPlacement> done;
        for (std::size_t i = 0; i < to_send.size(); ++i)
            if (delivered[i]) done.push_back({to_send[i].job_id, to_send[i].gpus, to_send[i].since, to_send[i].ended});
        if (!done.empty()) {
            try {
                state.update(kEpilogLockWaitMs, [&](NodeState& s) {
                    mark_reported(s, done);
                    return true;
                });
            } catch (const StateError&) {
                // Sent again later; colocd takes a repeated end as the same end.
            }
        }
        if (own && !delivered[0])
            log_once(services, subject,
                     {"ended report not delivered (" + why + "); kept for the next place request or epilog"});
    } catch (...) {
        log_once(services, subject, {"ended report failed unexpectedly"});
    }
}

}  // namespace coloc::spank
