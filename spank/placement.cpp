#include "spank/placement.hpp"

#include <algorithm>
#include <functional>

#include "proto/errors.hpp"
#include "proto/messages.hpp"
#include "spank/bounded_child.hpp"
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
        if (std::find(r.gpus.begin(), r.gpus.begin() + static_cast<long>(i), r.gpus[i]) != r.gpus.begin() + static_cast<long>(i))
            return "it names GPU " + std::to_string(r.gpus[i]) + " twice";
    if (!f.slurm_gpus.empty()) {
        for (int g : r.gpus)
            if (std::find(f.slurm_gpus.begin(), f.slurm_gpus.end(), g) == f.slurm_gpus.end())
                return "it names GPU " + std::to_string(g) + ", outside the step's GPUs " + proto::gpu_list(f.slurm_gpus);
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
            std::string w = state.update(kLockWaitMs, [&](NodeState& s) { apply(s); return true; });
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

// What the forked child reports back.
struct Exchange {
    int slots = -1;
    std::string slots_why;
    bool skip = false;           // Slurm gave the job no bind slots here: nothing to place
    std::optional<json> reply;
    std::string error_code;
    std::string error_message;
    std::string child_failure;   // killed at the deadline, crashed, ...
};

Exchange run_exchange(const PluginConfig& c, const JobFacts& f, const Services& s, proto::PlaceRequest request,
                      bool need_slots, bool skip_call, Clock::time_point deadline) {
    ChildResult r = run_in_child(deadline + std::chrono::milliseconds(kKillMarginMs), [&](const Emit& emit) {
        if (need_slots) {
            std::string why;
            int slots = s.lookup_slots(f, c.slot_gres, why);
            emit(json{{"slots", slots}, {"why", why}}.dump());
            if (slots == 0) {
                emit(json{{"skip", true}}.dump());
                return;
            }
            request.slots = std::max(slots, 0);
        }
        if (skip_call) {
            emit(json{{"error", {{"code", kNotRunning},
                                 {"message", "colocd is not running (" + c.endpoint + " does not exist)"}}}}.dump());
            return;
        }
        int budget = ms_left(deadline) - kReplyMarginMs;
        if (budget <= 0) {
            emit(json{{"error", {{"code", proto::code::kUnavailable}, {"message", "no time left to ask colocd"}}}}.dump());
            return;
        }
        try {
            json reply = s.call(c.endpoint, request.to_json(), {c.munge_socket, budget});
            emit(json{{"reply", reply}}.dump());
        } catch (const proto::ProtoError& e) {
            emit(json{{"error", {{"code", e.code()}, {"message", e.what()}}}}.dump());
        } catch (const std::exception& e) {
            emit(json{{"error", {{"code", proto::code::kInternal}, {"message", e.what()}}}}.dump());
        }
    });
    Exchange x;
    for (const std::string& line : r.lines) {
        json j = json::parse(line, nullptr, false);
        if (!j.is_object()) continue;
        if (j.contains("slots") && j["slots"].is_number_integer()) {
            x.slots = j["slots"].get<int>();
            x.slots_why = j.value("why", "");
        }
        if (j.contains("skip")) x.skip = true;
        if (j.contains("reply")) x.reply = j["reply"];
        if (j.contains("error") && j["error"].is_object()) {
            x.error_code = j["error"].value("code", proto::code::kInternal);
            x.error_message = j["error"].value("message", "");
        }
    }
    if (!x.reply && x.error_code.empty() && !x.skip)
        x.child_failure = r.failure.empty() ? "ended without an answer" : r.failure;
    return x;
}

std::string failure_text(const Exchange& x, const PluginConfig& c, bool asked_slots) {
    if (!x.child_failure.empty()) {
        if (x.child_failure == "killed at the deadline")
            return (asked_slots && x.slots < 0 ? std::string("slurmctld did not answer the slot lookup")
                                                : "colocd at " + c.endpoint + " did not answer") +
                   " within " + std::to_string(c.timeout_ms) + " ms";
        return "no answer from colocd: the helper process " + x.child_failure;
    }
    if (x.error_code == proto::code::kUnavailable)
        return x.error_message + " (deadline " + std::to_string(c.timeout_ms) + " ms)";
    if (x.error_code == proto::code::kInternal || x.error_code == kNotRunning) return x.error_message;
    if (x.error_code == proto::code::kBadJson || x.error_code == proto::code::kBadVersion)
        return "colocd's reply is unusable: " + x.error_message;  // the reply did not decode
    return "colocd refused the request: " + x.error_code + ": " + x.error_message;
}

}  // namespace

Outcome place_step(const PluginConfig& config, const UserOptions& options, const JobFacts& facts,
                   const Services& services) {
    try {
        if (options.off || facts.job_id <= 0) return {};
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
                if (const Holding* h = s.find(facts.job_id)) existing = *h;
                else to_report = unreported(s);
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

        const bool slurm_named = !facts.slurm_gpus.empty();
        if (config.mode == proto::GpuMode::Narrow && !slurm_named) return {};  // nothing to narrow
        const bool bindish = !slurm_named && (!config.mode || config.mode == proto::GpuMode::Bind);

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

        Exchange x = run_exchange(config, facts, services, req, bindish, endpoint_absent(config.endpoint), deadline);
        const std::int64_t now = services.now();

        if (x.skip) {
            // No bind slots here (e.g. a CPU-only job): remember it so later steps skip the lookup.
            Holding none{facts.job_id, holding_mode::kNone, {}, 0, false, true, now};
            if (state_ok) {
                try {
                    state.update(kLockWaitMs, [&](NodeState& s) { record(s, none); return true; });
                } catch (const StateError&) {
                }
            }
            log_once(services, who(facts), notes);
            return {};
        }

        std::string failure;
        if (x.reply) {
            try {
                proto::PlaceReply reply = proto::PlaceReply::from_json(*x.reply);
                std::string bad = check_reply(reply, facts, config, x.slots);
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
                    log_once(services, who(facts), notes);
                    return o;
                }
                failure = "colocd's reply is unusable: " + bad;
            } catch (const proto::ProtoError& e) {
                failure = std::string("colocd's reply is unusable: ") + e.what();
            }
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
                         facts.slurm_gpus, 0, true, false, now};
            keep_holding(state, state_ok, keep, notes, [&](NodeState& s) { record(s, keep); });
        } else if (config.mode == proto::GpuMode::Observe || !bindish) {
            notes.insert(notes.begin(), failure);
        } else if (!config.bind_fallback_possible()) {
            notes.insert(notes.begin(), failure + "; no GPU chosen (plugstack arguments gpus= and slots_per_gpu= "
                                                  "are needed for a local choice)");
        } else {
            const int want = std::min(x.slots > 0 ? x.slots : 1, config.gpus);
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
                        if (c.over_capacity) how = " (every GPU is full in " + state.data_path() + ": stale entries?)";
                        else if (c.fewer) how = " (fewer than the " + std::to_string(want) + " asked: no other GPU has a free slot)";
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
            std::string slots_note = x.slots < 0 ? " (slot count unknown" + (x.slots_why.empty() ? std::string() : ": " + x.slots_why) + "; assuming 1)" : "";
            notes.insert(notes.begin(), failure + "; GPUs " + proto::gpu_list(used.gpus) + " chosen locally" + how + slots_note);
            o = outcome_for(used, facts);
        }
        log_once(services, who(facts), notes);
        return o;
    } catch (...) {
        log_once(services, who(facts), {"placement failed unexpectedly; Slurm's environment kept"});
        return {};
    }
}

}  // namespace coloc::spank
