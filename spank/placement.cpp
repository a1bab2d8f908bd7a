#include "spank/placement.hpp"

#include <algorithm>
#include <functional>

#include "proto/errors.hpp"
#include "proto/messages.hpp"
#include "spank/bounded_child.hpp"
#include "spank/exchange_message.hpp"
#include "spank/exchange_util.hpp"
#include "spank/gpu_env.hpp"
#include "spank/local_state.hpp"

namespace coloc::spank {

using json = nlohmann::json;

namespace {

// A decision id, or "local" for a choice made here while colocd was away.
std::string label_of(const Holding& h) { return h.decision > 0 ? std::to_string(h.decision) : "local"; }

Outcome outcome_for(const Holding& h, const JobFacts& f) {
    Outcome o;
    o.decision = h.decision;
    if (h.mode == holding_mode::kNone || h.keep_slurm) return o;
    if (h.mode == holding_mode::kObserve) {
        if (h.decision > 0) o.decision_label = label_of(h);
        o.gpus = f.slurm_gpus;
        return o;
    }
    std::vector<int> chosen = f.slurm_gpus.empty() ? h.gpus : intersect(h.gpus, f.slurm_gpus);
    if (chosen.empty()) return o;  // e.g. a later step that holds none of the job's narrowed GPUs
    o.set_devices = true;
    o.visible_devices = visible_devices_for(chosen, f.slurm_gpus, f.cuda_visible);
    o.decision_label = label_of(h);
    o.gpus = chosen;
    return o;
}

// Why colocd's choice must not be applied, or empty when it may.
std::string check_reply(const proto::PlaceReply& r, const JobFacts& f, const PluginConfig& c, int slots) {
    if (r.mode == proto::GpuMode::Observe) return {};
    for (std::size_t i = 0; i < r.gpus.size(); ++i)
        if (std::find(r.gpus.begin(), r.gpus.begin() + static_cast<long>(i), r.gpus[i]) !=
            r.gpus.begin() + static_cast<long>(i))
            return "it names GPU " + std::to_string(r.gpus[i]) + " twice";
    if (!f.slurm_gpus.empty()) {
        for (int g : r.gpus)
            if (std::find(f.slurm_gpus.begin(), f.slurm_gpus.end(), g) == f.slurm_gpus.end())
                return "it names GPU " + std::to_string(g) + ", outside the step's GPUs " +
                       proto::gpu_list(f.slurm_gpus);
        return {};
    }
    if (c.gpus > 0)
        for (int g : r.gpus)
            if (g >= c.gpus) return "it names GPU " + std::to_string(g) + " on a node with " + std::to_string(c.gpus);
    if (r.gpus.empty() && slots > 0) return "it names no GPU for a job with " + std::to_string(slots) + " slots";
    return {};
}

Holding holding_from_reply(const proto::PlaceReply& r, const JobFacts& f, std::int64_t now) {
    Holding h;
    h.job_id = f.job_id;
    h.decision = r.decision;
    h.since = now;
    h.reported = true;
    if (r.mode == proto::GpuMode::Observe) {
        h.mode = holding_mode::kObserve;
        h.gpus = f.slurm_gpus;
    } else if (!f.slurm_gpus.empty()) {
        h.mode = holding_mode::kNarrow;
        h.gpus = r.gpus.empty() ? f.slurm_gpus : r.gpus;
        h.keep_slurm = r.gpus.empty();
    } else {
        h.mode = r.gpus.empty() ? holding_mode::kNone : holding_mode::kBind;
        h.gpus = r.gpus;
    }
    return h;
}

// Without a usable state file: spread jobs over the GPUs by job id rather than stack them on GPU 0.
std::vector<int> spread_choice(std::int64_t job_id, int gpus, int want) {
    std::vector<int> out;
    for (int i = 0; i < std::min(want, gpus); ++i) out.push_back(static_cast<int>((job_id + i) % gpus));
    std::sort(out.begin(), out.end());
    return out;
}

// Records `h` under the node lock (`apply` does it); when the lock could not be had a moment ago
// or cannot be had now, leaves it as a note instead, which the next step to take the lock merges:
// a busy lock must not make the node forget a job (its slots, its end, colocd's record).
void keep_holding(const StateFile& state, bool lock_usable, const Holding& h, std::vector<std::string>& notes,
                  const std::function<void(NodeState&)>& apply) {
    if (lock_usable) {
        try {
            std::string w = state.update(kLockWaitMs, [&](NodeState& s) {
                apply(s);
                return true;
            });
            if (!w.empty()) notes.push_back(w);
            return;
        } catch (const StateError& e) {
            notes.push_back(e.what());
        }
    }
    try {
        state.leave_note(h);
        notes.push_back("job " + std::to_string(h.job_id) + " left as a note for the next step to record");
    } catch (const StateError& e) {
        notes.push_back(std::string("not recorded: ") + e.what());
    }
}

// What the forked child reported, and how the child ended.
struct Exchange {
    ExchangeMessage msg;
    bool killed = false;        // at the deadline
    std::string child_failure;  // killed at the deadline, crashed, ... ; empty when it answered
};

// What the child does: look the bind slots up (need_slots), then ask colocd unless `skip_call`
// says why not (not_running) or the job opted out (`slots_only`).
struct ExchangeSteps {
    bool need_slots = false;
    bool skip_call = false;
    bool slots_only = false;
};

Exchange run_exchange(const PluginConfig& c, const JobFacts& f, const Services& s, proto::PlaceRequest request,
                      ExchangeSteps steps, Clock::time_point deadline) {
    ChildResult r = run_in_child(deadline + std::chrono::milliseconds(kKillMarginMs), [&](const Emit& emit) {
        ExchangeMessage m;
        if (steps.need_slots) {
            m.slots = s.lookup_slots(f, c.slot_gres, m.slots_why);
            m.skip = m.slots == 0;
            emit(encode(m));
            if (m.skip || steps.slots_only) return;
            request.slots = std::max(m.slots, 0);
        }
        auto fail = [&](ExchangeError error, std::string message, std::string code = {}) {
            m.error = error;
            m.message = std::move(message);
            m.code = std::move(code);
            emit(encode(m));
        };
        if (steps.skip_call)
            return fail(ExchangeError::NotRunning, "colocd is not running (" + c.endpoint + " does not exist)");
        int budget = ms_left(deadline) - kReplyMarginMs;
        if (budget <= 0) return fail(ExchangeError::Unavailable, "no time left to ask colocd");
        json reply;
        try {
            reply = s.call(c.endpoint, request.to_json(), {c.munge_socket, budget});
        } catch (const proto::ProtoError& e) {
            if (e.code() == proto::code::kUnavailable) return fail(ExchangeError::Unavailable, e.what());
            if (e.code() == proto::code::kInternal) return fail(ExchangeError::Internal, e.what());
            // bad_json, bad_version: the reply did not decode
            if (e.code() == proto::code::kBadJson || e.code() == proto::code::kBadVersion)
                return fail(ExchangeError::BadReply, e.what());
            return fail(ExchangeError::Refused, e.what(), e.code());
        } catch (const std::exception& e) {
            return fail(ExchangeError::Internal, e.what());
        }
        try {
            m.reply = proto::PlaceReply::from_json(reply);
        } catch (const proto::ProtoError& e) {
            return fail(ExchangeError::BadReply, e.what());
        }
        emit(encode(m));
    });
    Exchange x;
    // Each line is the whole message so far: the last one that decodes is what the child knew.
    for (auto line = r.lines.rbegin(); line != r.lines.rend(); ++line) {
        if (auto m = decode(*line)) {
            x.msg = std::move(*m);
            break;
        }
    }
    x.killed = r.killed;
    if (!x.msg.reply && x.msg.error == ExchangeError::None && !x.msg.skip && !(steps.slots_only && x.msg.slots >= 0))
        x.child_failure = r.failure.empty() ? "ended without an answer" : r.failure;
    return x;
}

std::string failure_text(const Exchange& x, const PluginConfig& c, bool asked_slots) {
    if (!x.child_failure.empty()) {
        if (x.killed)
            return (asked_slots && x.msg.slots < 0 ? std::string("slurmctld did not answer the slot lookup")
                                                   : "colocd at " + c.endpoint + " did not answer") +
                   " within " + std::to_string(c.timeout_ms) + " ms";
        return "no answer from colocd: the helper process " + x.child_failure;
    }
    switch (x.msg.error) {
        case ExchangeError::Unavailable:
            return x.msg.message + " (deadline " + std::to_string(c.timeout_ms) + " ms)";
        case ExchangeError::NotRunning:
        case ExchangeError::Internal:
            return x.msg.message;
        case ExchangeError::BadReply:
            return "colocd's reply is unusable: " + x.msg.message;
        case ExchangeError::Refused:
        case ExchangeError::None:
            break;
    }
    return "colocd refused the request: " + x.msg.code + ": " + x.msg.message;
}

// Bind mode without colocd's answer (or for a job that opted out): GPUs with free slots chosen
// here under the node lock from the node-local record, so that a job never runs with no GPU or
// on a full one. `why` opens the line that says so.
Holding choose_here(const PluginConfig& config, const JobFacts& facts, const StateFile& state, bool state_ok,
                    const ExchangeMessage& lookup, std::int64_t now, const std::string& why,
                    std::vector<std::string>& notes) {
    const int want = std::min(lookup.slots > 0 ? lookup.slots : 1, config.gpus);
    Holding local{facts.job_id, holding_mode::kBind, {}, 0, false, false, now};
    Holding used = local;
    std::string how;
    bool chosen = false;
    if (state_ok) {
        try {
            std::string w = state.update(kLockWaitMs, [&](NodeState& s) {
                if (const Holding* h = s.find(facts.job_id)) {
                    used = *h;
                    return false;
                }
                LocalChoice c = choose_local(s, config.gpus, config.slots_per_gpu, want);
                local.gpus = c.gpus;
                if (c.over_capacity)
                    how = " (every GPU is full in " + state.data_path() + ": stale entries?)";
                else if (c.fewer)
                    how = " (fewer than the " + std::to_string(want) + " asked: no other GPU has a free slot)";
                used = record(s, local);
                return true;
            });
            if (!w.empty()) notes.push_back(w);
            chosen = true;
        } catch (const StateError& e) {
            notes.push_back(std::string("node-local state unusable: ") + e.what());
        }
    }
    if (!chosen) {
        // The lock is busy: choose from the state as last written, and leave the choice
        // as a note so that colocd still hears of it.
        NodeState last = state.peek();
        if (const Holding* h = last.find(facts.job_id)) {
            used = *h;
        } else {
            local.gpus = choose_local(last, config.gpus, config.slots_per_gpu, want).gpus;
            used = local;
            try {
                state.leave_note(local);
                how = " (left as a note: node lock busy)";
            } catch (const StateError& e) {
                used.gpus = spread_choice(facts.job_id, config.gpus, want);
                how = " (unrecorded)";
                notes.push_back(e.what());
            }
        }
    }
    std::string slots_note;
    if (lookup.slots < 0)
        slots_note = " (slot count unknown" + (lookup.slots_why.empty() ? std::string() : ": " + lookup.slots_why) +
                     "; assuming 1)";
    notes.insert(notes.begin(), why + "; GPUs " + proto::gpu_list(used.gpus) + " chosen locally" + how + slots_note);
    return used;
}

// A bind-mode job that said --coloc=off: Slurm's slot count, then a local choice; colocd hears
// of it with the next request from this node, as of any local choice, so it counts those slots.
Outcome opted_out(const PluginConfig& config, const JobFacts& facts, const Services& services, const StateFile& state,
                  bool state_ok, Clock::time_point deadline, std::vector<std::string>& notes) {
    proto::PlaceRequest none;
    Exchange x = run_exchange(config, facts, services, none, {true, true, true}, deadline);
    const std::int64_t now = services.now();
    if (x.msg.skip) {
        log_once(services, who(facts), notes);
        return {};
    }
    const Holding used = choose_here(config, facts, state, state_ok, x.msg, now, "--coloc=off", notes);
    log_once(services, who(facts), notes);
    return outcome_for(used, facts);
}

}  // namespace

Outcome place_step(const PluginConfig& config, const UserOptions& options, const JobFacts& facts,
                   const Services& services) {
    try {
        if (facts.job_id <= 0) return {};
        const bool slurm_named = !facts.slurm_gpus.empty();
        const bool bindish = !slurm_named && (!config.mode || config.mode == proto::GpuMode::Bind);
        // Opted out of colocd's choice, not out of GPUs: in bind mode Slurm names none, so such a
        // job still gets GPUs of its own slots, chosen as the fallback chooses them (below).
        if (options.off && (!bindish || !config.bind_fallback_possible())) return {};
        const auto t0 = Clock::now();
        const auto deadline = t0 + std::chrono::milliseconds(config.timeout_ms);
        std::vector<std::string> notes;
        const StateFile state(config.state_dir, facts.node);
        bool state_ok = true;

        // A later step of a job already placed on this node reuses the job's decision.
        std::optional<Holding> existing;
        std::vector<proto::LocalPlacement> to_report;
        try {
            std::string warning = state.update(kLockWaitMs, [&](NodeState& s) {
                if (const Holding* h = s.find(facts.job_id))
                    existing = *h;
                else
                    to_report = unreported(s);
                return false;
            });
            if (!warning.empty()) notes.push_back(warning);
        } catch (const StateError& e) {
            state_ok = false;
            notes.push_back(std::string("node-local state unusable: ") + e.what());
        }
        if (existing) {
            log_once(services, who(facts), notes);
            return outcome_for(*existing, facts);
        }

        if (config.mode == proto::GpuMode::Narrow && !slurm_named) return {};  // nothing to narrow
        if (options.off) return opted_out(config, facts, services, state, state_ok, deadline, notes);

        proto::PlaceRequest req;
        req.job_id = facts.job_id;
        req.job_uid = facts.uid;
        req.node = facts.node;
        req.partition = facts.partition;
        req.job_name = facts.job_name.substr(0, 200);
        req.profile = options.profile;
        req.mode = config.mode;
        req.slurm_gpus = facts.slurm_gpus;
        req.job_nodes = facts.job_nodes;
        req.unreported = to_report;

        Exchange x =
            run_exchange(config, facts, services, req, {bindish, endpoint_absent(config.endpoint), false}, deadline);
        const std::int64_t now = services.now();

        if (x.msg.skip) {
            // No bind slots here (e.g. a CPU-only job): remember it so later steps skip the lookup.
            Holding none{facts.job_id, holding_mode::kNone, {}, 0, false, true, now};
            if (state_ok) {
                try {
                    state.update(kLockWaitMs, [&](NodeState& s) {
                        record(s, none);
                        return true;
                    });
                } catch (const StateError&) {}
            }
            log_once(services, who(facts), notes);
            return {};
        }

        std::string failure;
        if (x.msg.reply) {
            const proto::PlaceReply& reply = *x.msg.reply;
            std::string bad = check_reply(reply, facts, config, x.msg.slots);
            if (bad.empty()) {
                Holding fresh = holding_from_reply(reply, facts, now);
                Holding used = fresh;
                keep_holding(state, state_ok, fresh, notes, [&](NodeState& s) {
                    used = record(s, fresh);
                    mark_reported(s, req.unreported);
                });
                Outcome o = outcome_for(used, facts);
                o.report_started = used.decision == fresh.decision && fresh.decision > 0;
                if (o.report_started && o.gpus.empty()) o.gpus = used.gpus;
                o.profile_unknown = reply.profile_unknown;
                log_once(services, who(facts), notes);
                return o;
            }
            failure = "colocd's reply is unusable: " + bad;
        } else {
            failure = failure_text(x, config, bindish);
        }

        // Fail open. How long the launch waited is part of the line: admins (and the tests)
        // check it against the deadline.
        failure += "; fell back after " +
                   std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - t0).count()) +
                   " ms";
        Outcome o;
        if (slurm_named) {
            notes.insert(notes.begin(), failure + "; keeping Slurm's GPUs " + proto::gpu_list(facts.slurm_gpus));
            Holding keep{facts.job_id,
                         config.mode == proto::GpuMode::Observe ? holding_mode::kObserve : holding_mode::kNarrow,
                         facts.slurm_gpus,
                         0,
                         true,
                         false,
                         now};
            keep_holding(state, state_ok, keep, notes, [&](NodeState& s) { record(s, keep); });
        } else if (config.mode == proto::GpuMode::Observe || !bindish) {
            notes.insert(notes.begin(), failure);
        } else if (!config.bind_fallback_possible()) {
            notes.insert(notes.begin(), failure +
                                            "; no GPU chosen (plugstack arguments gpus= and slots_per_gpu= "
                                            "are needed for a local choice)");
        } else {
            o = outcome_for(choose_here(config, facts, state, state_ok, x.msg, now, failure, notes), facts);
        }
        log_once(services, who(facts), notes);
        return o;
    } catch (...) {
        log_once(services, who(facts), {"placement failed unexpectedly; Slurm's environment kept"});
        return {};
    }
}

}  // namespace coloc::spank
