// The ranked candidates of a decision as the store keeps them (placements.alternatives) for
// `colocctl explain`. Every candidate on a node lists the same neighbours, and a neighbour's
// effect depends only on what it would share with the job, so the stored form lists each
// distinct neighbour effect once and each candidate refers to them by position:
//   {"effects": [[job_id, shares, before, after], ...],
//    "candidates": [{"where": [{"node", "gpus"}], "job_slowdown", "harm", "loss", "neighbours": [i, ...]}]}
// A third of the bytes of the full list (which decisions stored before), written without
// building a JSON tree: the place path writes one per decision.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "proto/envelope.hpp"

namespace coloc::daemon {

class AlternativesWriter {
public:
    // Starts the next candidate; its `where` entries and neighbours follow.
    void candidate(double job_slowdown, double harm, double loss);
    void where(std::string_view node, const std::vector<int>& gpus);
    void neighbour(std::int64_t job_id, const char* shares, double before, double after);
    // The sharing rule's verdict on the chosen candidate (stored as "sharing"; none when empty).
    void sharing(std::string_view why) { sharing_ = why; }
    // The stored text; the writer is empty again afterwards.
    std::string finish();

private:
    struct Effect {
        std::int64_t job_id;
        const char* shares;
        double before, after;
    };
    struct Pending {
        double job_slowdown, harm, loss;
        std::string where;                    // JSON objects, comma-separated
        std::vector<std::size_t> neighbours;  // positions in effects_
    };
    std::vector<Effect> effects_;
    std::vector<Pending> candidates_;
    std::string sharing_;
};

// The candidates as explain shows them: each with its neighbours in full. Reads the stored form
// above and the full list stored before it; anything else gives an empty list.
proto::json explain_candidates(const std::string& stored);
// The sharing rule's verdict stored with them; empty when none was (older decisions).
std::string explain_sharing(const std::string& stored);

}  // namespace coloc::daemon
