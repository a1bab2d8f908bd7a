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
    // The model the policy decides by, when it may change between decisions.
    void follow(const model::InterferenceModel* model) { model_ = model; }

    // Remembers why `job` was turned down (`d` is the policy's decision, not placed).
    void remember(int job, const place::ClusterState& state, const place::Decision& d) {
        Entry& e = entries_[job];
        e.held = d.held;
        e.changes = state.changes();
        e.weighed = d.chosen;
        e.version = model_ ? model_->version() : 0;
        e.bound.valid = false;  // worked out at the first weighing again
    }
    void forget(int job) { entries_.erase(job); }

    // Whether asking the policy again about `request` now would surely (held: most likely) give
    // the same answer.
    bool still_turned_down(const place::ClusterState& state, const place::JobRequest& request) {
        auto it = entries_.find(static_cast<int>(request.id));
        if (it == entries_.end()) return false;
        Entry& e = it->second;
        if (model_ && model_->version() != e.version) return false;
        if (!e.held) return state.changes() == e.changes;
        if (state.nodes_with_at_least(place::Capacity::Idle, request.gpus_per_node) >= request.nodes) return false;
        if (!request.outlook) return false;
        if (place::certainly_held(state, request, *request.outlook, e.bound)) return true;
        return place::judge_sharing(state, request, e.weighed, *request.outlook, &e.bound).hold;
    }

private:
    struct Entry {
        bool held = false;          // by the sharing rule (else: the admission limit)
        std::uint64_t changes = 0;  // ClusterState::changes() then
        place::Candidate weighed;
        std::uint64_t version = 0;  // the followed model's version() then
        place::HoldBound bound;     // from its latest weighing
    };
    std::unordered_map<int, Entry> entries_;
    const model::InterferenceModel* model_ = nullptr;
};

}  // namespace coloc::replay
