// What the replay remembers of queued jobs the policy turned down, so that a deep queue is not
// searched again at every event for verdicts that have not changed.
//
// A job the sharing rule held is searched again only when GPUs of its own are idle (then it is
// never held) or when the candidate it weighed, weighed again now, no longer holds it: the wait
// shrinks as time passes, the neighbours' time left with it, and neighbours that ended no longer
// count. Weighing again is cheap (no search); a verdict that turns is then searched in full.
// Most need not even be weighed again: while nothing changed where their price was read, a
// price whose floor still exceeds the longest any wait can last holds them for certain
// (place::certainly_held, O(1)); the answer is the one weighing again would give.
// A job turned down for any other reason (the admission limit) is asked again once the cluster
// changed at all. What this leaves out: a better shared place opening elsewhere is found when
// the weighed one turns, not at once (on bench/replay-speed's trace the mean wait grows by about
// a tenth; a search at every event made the replay ten times slower).
#pragma once

#include <cstdint>
#include <unordered_map>

#include "model/model.hpp"
#include "place/cluster_state.hpp"
#include "place/policy.hpp"
#include "place/sharing_rule.hpp"

namespace coloc::replay {

class HeldJobs {
public:
    // The model `policy` decides by, when it may change between decisions (learning), and how
    // often at most (seconds) a held job's candidate is scored again because it changed.
    void follow(const model::InterferenceModel* model, const place::Policy* policy, double refresh_s) {
        model_ = model;
        policy_ = policy;
        refresh_s_ = refresh_s;
    }

    // Remembers why `job` was turned down (`d` is the policy's decision, not placed).
    void remember(int job, const place::ClusterState& state, const place::Decision& d, double now) {
        Entry& e = entries_[job];
        e.searched_at = now;
        e.held = d.held;
        e.changes = state.changes();
        e.weighed = d.chosen;
        e.version = model_ ? model_->settled_version() : 0;
        e.bound.valid = false;  // worked out at the first weighing again
    }
    void forget(int job) { entries_.erase(job); }

    // Whether asking the policy again about `request` now would surely (held: most likely) give
    // the same answer.
    bool still_turned_down(const place::ClusterState& state, const place::JobRequest& request, double now) {
        auto it = entries_.find(static_cast<int>(request.id));
        if (it == entries_.end()) return false;
        Entry& e = it->second;
        // A model that learned may price its candidate otherwise: the candidate is scored again
        // once the model's pair predictions were worked out afresh (settled_version: its online
        // steps in between move every prediction a little, and scoring every held job again
        // after them took a third of the learning replay's time), at most once a refresh_s;
        // meanwhile it is weighed with what was predicted then.
        if (model_ && model_->settled_version() != e.version && now - e.searched_at >= refresh_s_) {
            if (!e.held || !request.outlook || !rescored(e, state, request, now)) return false;
        }
        if (!e.held) return state.changes() == e.changes;
        if (state.nodes_with_at_least(place::Capacity::Idle, request.gpus_per_node) >= request.nodes) return false;
        if (!request.outlook) return false;
        if (place::certainly_held(state, request, *request.outlook, e.bound)) return true;
        return place::judge_sharing(state, request, e.weighed, *request.outlook, &e.bound).hold;
    }

private:
    struct Entry;
    // Its candidate scored with the model as it is now; false when that no longer holds it (or
    // the policy cannot score it), so that it is searched again.
    bool rescored(Entry& e, const place::ClusterState& state, const place::JobRequest& request, double now) {
        if (!policy_) return false;
        std::optional<place::Candidate> c = policy_->rescore(state, request, e.weighed);
        if (!c || !place::judge_sharing(state, request, *c, *request.outlook, &e.bound).hold) return false;
        e.weighed = std::move(*c);
        e.version = model_->settled_version();
        e.searched_at = now;
        return true;
    }
    struct Entry {
        bool held = false;          // by the sharing rule (else: the admission limit)
        std::uint64_t changes = 0;  // ClusterState::changes() then
        place::Candidate weighed;
        std::uint64_t version = 0;  // the followed model's settled_version() then
        place::HoldBound bound;     // from its latest weighing
        double searched_at = 0;     // when it was last searched
    };
    std::unordered_map<int, Entry> entries_;
    const model::InterferenceModel* model_ = nullptr;
    const place::Policy* policy_ = nullptr;
    double refresh_s_ = 0;
};

}  // namespace coloc::replay
