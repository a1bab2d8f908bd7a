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
    if (h.mode == HoldingMode::None || h.keep_slurm) return o;
    if (h.mode == HoldingMode::Observe) {
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
        h.mode = HoldingMode::Observe;
        h.gpus = f.slurm_gpus;
    } else if (!f.slurm_gpus.empty()) {
        h.mode = HoldingMode::Narrow;
        h.gpus = r.gpus.empty() ? f.slurm_gpus : r.gpus;
        h.keep_slurm = r.gpus.empty();
    } else {
        h.mode = r.gpus.empty() ? HoldingMode::None : HoldingMode::Bind;
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

// Settles the job's holding under the node lock (`settle` records it and returns the one in
// force); when the lock could not be had a moment ago or cannot be had now, settles it against
// the state as last written and leaves the result as a note, which the next step to take the
// lock merges: a busy lock must not make the node forget a job (its slots, its end, colocd's record).
Holding keep_holding(const StateFile& state, bool lock_usable, std::vector<std::string>& notes,
                     const std::function<Holding(NodeState&)>& settle) {
    if (lock_usable) {
        try {
            Holding used;
            std::string w = state.update(kLockWaitMs, [&](NodeState& s) {
                used = settle(s);
                return true;
            });
            if (!w.empty()) notes.push_back(w);
            return used;
        } catch (const StateError& e) {
            notes.push_back(e.what());
        }
    }
    NodeState last = state.peek();
    const Holding h = settle(last);
    try {
        state.leave_note(h);
        notes.push_back("job " + std::to_string(h.job_id) + " left as a note for the next step to record");
    } catch (const StateError& e) {
        notes.push_back(std::string("not recorded: ") + e.what());
    }
    return h;
}

// colocd's GPUs for a bind job, unless the node-local record shows one of them full: colocd
// has not heard of every local choice yet (one made while it was slow, on this node), and a
// GPU must never run more jobs than its slots. Then GPUs are chosen here as the fallback
// chooses them, and colocd hears of them as of any local choice. `full` says which were full.
Holding settle_bind_reply(NodeState& s, const Holding& fresh, const PluginConfig& c, std::vector<int>& full) {
    full.clear();
    if (const Holding* h = s.find(fresh.job_id)) return *h;
    if (fresh.mode == HoldingMode::Bind && c.bind_fallback_possible())
        full = full_gpus(s, fresh.gpus, c.gpus, c.slots_per_gpu);
    if (full.empty()) return record(s, fresh);
    Holding local = fresh;
    local.decision = 0;
    local.reported = false;
    local.gpus = choose_local(s, c.gpus, c.slots_per_gpu, static_cast<int>(fresh.gpus.size())).gpus;
    return record(s, local);
}

double ms_since(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }

// Asks colocd in this process: the call bounds itself (the credential on a thread of its own,
// ZeroMQ by its send and receive timeouts), so no fork is needed on the launch path.
ExchangeMessage ask_colocd(const PluginConfig& c, const Services& s, const proto::PlaceRequest& request,
                           Clock::time_point deadline, StageTimes& times) {
    ExchangeMessage m;
    auto fail = [&](ExchangeError error, std::string message, std::string code = {}) {
        m.error = error;
        m.message = std::move(message);
        m.code = std::move(code);
        return m;
    };
    if (endpoint_absent(c.endpoint))
        return fail(ExchangeError::NotRunning, "colocd is not running (" + c.endpoint + " does not exist)");
    const int budget = ms_left(deadline) - kReplyMarginMs;
    if (budget <= 0) return fail(ExchangeError::Unavailable, "no time left to ask colocd");
    json reply;
    const auto t0 = Clock::now();
    double munge_ms = -1;
    json body = request.to_json();
    if (!c.cluster.empty()) body["cluster"] = c.cluster;
    try {
        reply = s.call(c.endpoint, body, {c.munge_socket, budget, &munge_ms});
    } catch (const proto::ProtoError& e) {
        times.munge_ms = munge_ms;
        times.call_ms = ms_since(t0) - std::max(munge_ms, 0.0);
        if (e.code() == proto::code::kUnavailable) return fail(ExchangeError::Unavailable, e.what());
        if (e.code() == proto::code::kInternal) return fail(ExchangeError::Internal, e.what());
        // bad_json, bad_version, reply_mismatch: the reply did not decode, or answers another request
        if (e.code() == proto::code::kBadJson || e.code() == proto::code::kBadVersion ||
            e.code() == proto::code::kReplyMismatch)
            return fail(ExchangeError::BadReply, e.what());
        return fail(ExchangeError::Refused, e.what(), e.code());
    } catch (const std::exception& e) {
        return fail(ExchangeError::Internal, e.what());
    }
    times.munge_ms = munge_ms;
    times.call_ms = ms_since(t0) - std::max(munge_ms, 0.0);
    try {
        m.reply = proto::PlaceReply::from_json(reply);
    } catch (const proto::ProtoError& e) {
        return fail(ExchangeError::BadReply, e.what());
    }
    return m;
}

// Slurm's bind slots for the job here, asked of slurmctld in a forked child killed at `deadline`
// (slurm_load_job has no deadline of its own). Only where the plugin must choose GPUs without
// colocd: colocd reads the count itself on the usual path.
ExchangeMessage lookup_slots_bounded(const PluginConfig& c, const JobFacts& f, const Services& s,
                                     Clock::time_point deadline, StageTimes& times) {
    const auto t0 = Clock::now();
    ChildResult r = run_in_child(deadline + std::chrono::milliseconds(kKillMarginMs), [&](const Emit& emit) {
        ExchangeMessage m;
        m.slots = s.lookup_slots(f, c.slot_gres, m.slots_why);
        m.skip = m.slots == 0;
        emit(encode(m));
    });
    times.lookup_ms = ms_since(t0);
    for (auto line = r.lines.rbegin(); line != r.lines.rend(); ++line)
        if (auto m = decode(*line)) return *m;
    ExchangeMessage unknown;
    unknown.slots_why =
        r.killed
            ? "slurmctld did not answer the slot lookup within " +
                  std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(deadline - t0).count()) + " ms"
            : "the helper process " + (r.failure.empty() ? std::string("ended without an answer") : r.failure);
    return unknown;
}

std::string failure_text(const ExchangeMessage& x, const PluginConfig& c) {
    switch (x.error) {
        case ExchangeError::Unavailable:
            return x.message + " (deadline " + std::to_string(c.timeout_ms) + " ms)";
        case ExchangeError::NotRunning:
        case ExchangeError::Internal:
            return x.message;
        case ExchangeError::BadReply:
            return "colocd's reply is unusable: " + x.message;
        case ExchangeError::Refused:
        case ExchangeError::None:
            break;
    }
    return "colocd refused the request: " + x.code + ": " + x.message;
}

// No bind slots here (e.g. a CPU-only job): remembered so later steps ask nothing.
void remember_none(const StateFile& state, bool state_ok, const JobFacts& facts, std::int64_t now) {
    if (!state_ok) return;
    const Holding none{.job_id = facts.job_id, .mode = HoldingMode::None, .since = now};
    try {
        state.update(kLockWaitMs, [&](NodeState& s) {
            record(s, none);
            return true;
        });
    } catch (const StateError&) {}
}

// A local choice is reported as the job's tasks start (task_post_fork, off the launch path)
// rather than only with the next place request from this node: colocd then counts its slots
// before it places others here, and takes the job's own reports (observe) at once.
Outcome reported_at_start(Outcome o) {
    o.report_started = o.decision == 0 && !o.gpus.empty();
    return o;
}

// Bind mode without colocd's answer (or for a job that opted out): GPUs with free slots chosen
// here under the node lock from the node-local record, so that a job never runs with no GPU or
// on a full one. `why` opens the line that says so.
Holding choose_here(const PluginConfig& config, const JobFacts& facts, const StateFile& state, bool state_ok,
                    const ExchangeMessage& lookup, std::int64_t now, const std::string& why,
                    std::vector<std::string>& notes) {
    const int want = std::min(lookup.slots > 0 ? lookup.slots : 1, config.gpus);
    Holding local{.job_id = facts.job_id, .mode = HoldingMode::Bind, .reported = false, .since = now};
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

// One step's placement as its stages pass it on. The stages add to `notes`, which place()
// logs as one line whatever the exit; a stage with nothing to say clears them.
struct Step {
    const PluginConfig& config;
    const UserOptions& options;
    const JobFacts& facts;
    const Services& services;
    StageTimes& times;
    const bool slurm_named;  // Slurm gave the step GPUs by index
    const bool bindish;      // colocd (or the fallback) chooses the job's GPUs from its bind slots
    const Clock::time_point t0 = Clock::now();
    const Clock::time_point deadline = t0 + std::chrono::milliseconds(config.timeout_ms);
    const StateFile state{config.state_dir, facts.node};
    bool state_ok = true;
    std::vector<std::string> notes = {};
    std::vector<proto::LocalPlacement> to_report = {};  // local choices and ends colocd has not heard of
};

// The plugin's view of the step's mode: its own mode= and what Slurm gave the step (it knows
// no site rules). Bind needs count-only slots, so a step Slurm named GPUs for is never bound.
bool binds(const PluginConfig& config, bool slurm_named) {
    const proto::GpuMode mode = proto::decide_mode(
        {.asked = config.mode, .slurm_named_gpus = slurm_named, .bind_slots = !config.slot_gres.empty()});
    return !slurm_named && mode == proto::GpuMode::Bind;
}

// A later step of a job already placed on this node reuses the job's decision: it reads the
// node-local record and asks nothing. Otherwise notes what colocd has not heard of yet.
std::optional<Holding> read_record(Step& s) {
    std::optional<Holding> existing;
    try {
        std::string warning = s.state.update(kLockWaitMs, [&](NodeState& n) {
            if (const Holding* h = n.find(s.facts.job_id))
                existing = *h;
            else
                s.to_report = unreported(n);
            return false;
        });
        if (!warning.empty()) s.notes.push_back(warning);
    } catch (const StateError& e) {
        s.state_ok = false;
        s.notes.push_back(std::string("node-local state unusable: ") + e.what());
    }
    s.times.lock_ms = ms_since(s.t0);
    return existing;
}

// A bind-mode job that said --coloc=off: Slurm's slot count, then a local choice; colocd hears
// of it with the next request from this node, as of any local choice, so it counts those slots.
Outcome opted_out(Step& s) {
    s.times.path = "off";
    const ExchangeMessage lookup = lookup_slots_bounded(s.config, s.facts, s.services, s.deadline, s.times);
    const std::int64_t now = s.services.now();
    if (lookup.skip) return {};
    const auto t0 = Clock::now();
    const Holding used = choose_here(s.config, s.facts, s.state, s.state_ok, lookup, now, "--coloc=off", s.notes);
    s.times.record_ms = ms_since(t0);
    return reported_at_start(outcome_for(used, s.facts));
}

proto::PlaceRequest request_for(const Step& s) {
    proto::PlaceRequest req;
    req.job_id = s.facts.job_id;
    req.job_uid = s.facts.uid;
    req.node = s.facts.node;
    req.partition = s.facts.partition;
    req.job_name = s.facts.job_name.substr(0, 200);
    req.profile = s.options.profile;
    req.mode = s.config.mode;
    req.slurm_gpus = s.facts.slurm_gpus;
    if (s.bindish) req.slots_gres = s.config.slot_gres;  // colocd reads the count from Slurm
    req.job_nodes = s.facts.job_nodes;
    req.unreported = s.to_report;
    return req;
}

// colocd's usable reply, recorded under the node lock and applied (unless the record shows one
// of its GPUs full: then GPUs chosen here).
Outcome apply_reply(Step& s, const proto::PlaceReply& reply, const proto::PlaceRequest& req, std::int64_t now) {
    const auto t_record = Clock::now();
    const Holding fresh = holding_from_reply(reply, s.facts, now);
    std::vector<int> full;
    const Holding used = keep_holding(s.state, s.state_ok, s.notes, [&](NodeState& n) {
        Holding h = settle_bind_reply(n, fresh, s.config, full);
        mark_reported(n, req.unreported);
        return h;
    });
    s.times.record_ms = ms_since(t_record);
    Outcome o = outcome_for(used, s.facts);
    const bool colocds = used.decision == fresh.decision && fresh.decision > 0;
    const bool moved = !full.empty() && used.decision == 0;
    o.report_started = colocds || moved;
    if (colocds) {
        o.phase_offset_s = reply.phase_offset_s;
        o.phase_period_s = reply.phase_period_s;
    }
    if (moved) {
        s.times.path = "moved";
        s.notes.insert(s.notes.begin(), "colocd's GPUs " + proto::gpu_list(fresh.gpus) + " (decision " +
                                            std::to_string(fresh.decision) + "): GPU " + proto::gpu_list(full) +
                                            " full in the node-local record; GPUs " + proto::gpu_list(used.gpus) +
                                            " chosen locally");
    }
    o.profile_unknown = reply.profile_unknown;
    if (o.report_started && o.gpus.empty()) o.gpus = used.gpus;
    return o;
}

// Fail open: Slurm's GPUs where it named some, else (bind) a local choice where the plugstack
// arguments allow one. How long the launch waited is part of the line: admins (and the tests)
// check it against the deadline.
Outcome fall_back(Step& s, const std::string& failure, std::int64_t now) {
    s.times.path = "fallback";
    auto why = [&] {  // read as the line is made: a local choice's includes the slot lookup
        return failure + "; fell back after " +
               std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - s.t0).count()) +
               " ms";
    };
    if (s.slurm_named) {
        s.notes.insert(s.notes.begin(), why() + "; keeping Slurm's GPUs " + proto::gpu_list(s.facts.slurm_gpus));
        const Holding keep{
            .job_id = s.facts.job_id,
            .mode = s.config.mode == proto::GpuMode::Observe ? HoldingMode::Observe : HoldingMode::Narrow,
            .gpus = s.facts.slurm_gpus,
            .keep_slurm = true,
            .reported = false,
            .since = now};
        keep_holding(s.state, s.state_ok, s.notes, [&](NodeState& n) { return record(n, keep); });
        return {};
    }
    if (s.config.mode == proto::GpuMode::Observe || !s.bindish) {
        s.notes.insert(s.notes.begin(), why());
        return {};
    }
    if (!s.config.bind_fallback_possible()) {
        s.notes.insert(s.notes.begin(), why() +
                                            "; no GPU chosen (plugstack arguments gpus= and slots_per_gpu= "
                                            "are needed for a local choice)");
        return {};
    }
    // Choosing alone needs Slurm's slot count: asked here, within the deadline or, when colocd
    // used all of it, kFallbackLookupMs more.
    const auto lookup_deadline = std::max(s.deadline, Clock::now() + std::chrono::milliseconds(kFallbackLookupMs));
    const ExchangeMessage lookup = lookup_slots_bounded(s.config, s.facts, s.services, lookup_deadline, s.times);
    if (lookup.skip) {  // no bind slots here: nothing to place, nothing to say
        remember_none(s.state, s.state_ok, s.facts, now);
        s.notes.clear();
        return {};
    }
    const auto t_record = Clock::now();
    Outcome o = reported_at_start(
        outcome_for(choose_here(s.config, s.facts, s.state, s.state_ok, lookup, now, why(), s.notes), s.facts));
    s.times.record_ms = ms_since(t_record);
    return o;
}

// The stages of one step's placement, in order; each exit leaves its line in s.notes.
Outcome place_stages(Step& s) {
    if (const std::optional<Holding> existing = read_record(s)) {
        s.times.path = "reuse";
        return outcome_for(*existing, s.facts);
    }
    if (s.config.mode == proto::GpuMode::Narrow && !s.slurm_named) {  // nothing to narrow
        s.notes.clear();
        return {};
    }
    if (s.options.off) return opted_out(s);

    const proto::PlaceRequest req = request_for(s);
    s.times.path = "colocd";
    const ExchangeMessage x = ask_colocd(s.config, s.services, req, s.deadline, s.times);
    const std::int64_t now = s.services.now();
    if (!x.reply) return fall_back(s, failure_text(x, s.config), now);
    if (s.bindish && x.reply->slots == 0 && x.reply->decision == 0) {  // no bind slots here
        remember_none(s.state, s.state_ok, s.facts, now);
        return {};
    }
    const std::string bad = check_reply(*x.reply, s.facts, s.config, std::max(x.reply->slots, 0));
    if (!bad.empty()) return fall_back(s, "colocd's reply is unusable: " + bad, now);
    return apply_reply(s, *x.reply, req, now);
}

Outcome place(const PluginConfig& config, const UserOptions& options, const JobFacts& facts, const Services& services,
              StageTimes& times) {
    const bool slurm_named = !facts.slurm_gpus.empty();
    const bool bindish = binds(config, slurm_named);
    // Opted out of colocd's choice, not out of GPUs: in bind mode Slurm names none, so such a
    // job still gets GPUs of its own slots, chosen as the fallback chooses them.
    if (options.off && (!bindish || !config.bind_fallback_possible())) return {};
    Step step{.config = config,
              .options = options,
              .facts = facts,
              .services = services,
              .times = times,
              .slurm_named = slurm_named,
              .bindish = bindish};
    Outcome o = place_stages(step);
    log_once(services, who(facts), step.notes);
    return o;
}

}  // namespace

Outcome choose_step_gpus(const PluginConfig& config, const UserOptions& options, const JobFacts& facts,
                         const Services& services) {
    StageTimes times;
    const auto t0 = Clock::now();
    Outcome o;
    try {
        if (facts.job_id > 0) o = place(config, options, facts, services, times);
    } catch (...) {
        log_once(services, who(facts), {"placement failed unexpectedly; Slurm's environment kept"});
        o = {};
    }
    times.place_ms = ms_since(t0);
    o.times = times;
    return o;
}

}  // namespace coloc::spank
