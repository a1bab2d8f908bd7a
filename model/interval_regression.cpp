#include "model/interval_regression.hpp"

#include <algorithm>
#include <cmath>
#include <string_view>
#include <tuple>
#include <unordered_map>

#include "model/eigen.hpp"

namespace coloc::model {

bool usable_run(const EndedRun& run, const IntervalOptions& o, LeftOut& left_out) {
    if (run.state != "COMPLETED" && run.state != "ended") {
        ++left_out.failed;
        return false;
    }
    if (!(run.elapsed_s >= o.min_elapsed_s)) {
        ++left_out.too_short;
        return false;
    }
    if (!(run.solo_s > 0)) {
        ++left_out.no_solo;
        return false;
    }
    const auto on_gpus = [](const RunInterval& k) {
        return std::count_if(k.neighbours.begin(), k.neighbours.end(),
                             [](const auto& n) { return n.second == Sharing::Gpu; });
    };
    if (run.gpus > 1 && std::any_of(run.intervals.begin(), run.intervals.end(),
                                    [&](const RunInterval& k) { return k.duration_s > 0 && on_gpus(k) > 1; })) {
        ++left_out.several_gpus;
        return false;
    }
    for (const RunInterval& k : run.intervals)
        if (k.duration_s > 0 && !k.neighbours.empty()) return true;
    ++left_out.alone;
    return false;
}

namespace {

// A pair named by views into the runs (a window of runs names the same few pairs thousands of
// times: hashed views, no string copies, until the keys are numbered).
struct PairView {
    std::string_view job, neighbour;
    Sharing where = Sharing::Gpu;
    bool operator==(const PairView&) const = default;
    auto tie() const { return std::tie(job, neighbour, where); }
};

struct PairViewHash {
    std::size_t operator()(const PairView& k) const {
        const std::size_t h = std::hash<std::string_view>{}(k.job) * 31 + std::hash<std::string_view>{}(k.neighbour);
        return h * 8 + static_cast<std::size_t>(k.where);
    }
};

}  // namespace

IntervalFit fit_interval_delays(const std::vector<EndedRun>& runs, const PriorDelay& prior, const IntervalOptions& o) {
    IntervalFit fit;
    std::vector<const EndedRun*> used;
    // Each pair numbered as first seen, and each (run, interval, neighbour) of the used runs by
    // that number, in order: one hash per mention.
    std::unordered_map<PairView, int, PairViewHash> seen;
    std::vector<PairView> pair_of;  // by first-seen number
    std::vector<int> mentions;
    for (const EndedRun& r : runs) {
        if (!usable_run(r, o, fit.left_out)) continue;
        used.push_back(&r);
        for (const RunInterval& k : r.intervals)
            for (const auto& [name, where] : k.neighbours) {
                const PairView key{r.job, name, where};
                auto [it, fresh] = seen.try_emplace(key, static_cast<int>(pair_of.size()));
                if (fresh) pair_of.push_back(key);
                mentions.push_back(it->second);
            }
    }
    fit.used = static_cast<int>(used.size());
    if (pair_of.empty()) return fit;
    std::vector<int> ordered(pair_of.size());
    for (std::size_t i = 0; i < ordered.size(); ++i) ordered[i] = static_cast<int>(i);
    std::sort(ordered.begin(), ordered.end(), [&](int a, int b) {
        return pair_of[static_cast<std::size_t>(a)].tie() < pair_of[static_cast<std::size_t>(b)].tie();
    });
    std::vector<int> index(pair_of.size());  // first-seen number -> position in key order
    // Numbered in key order, the pairs of one job come together; only its own runs name them, so
    // the normal equations fall apart into one block per job, each solved on its own (a window of
    // many jobs' runs costs the sum of small blocks' cubes, not the cube of all their pairs).
    struct Block {
        Eigen::Index from = 0, size = 0;
        Eigen::MatrixXd A;
        Eigen::VectorXd b;
        bool settled = false;  // its delays stopped moving: they stay as they are
    };
    std::vector<PairKey> keys;
    std::vector<Block> blocks;
    std::unordered_map<std::string_view, std::size_t> block_of;
    for (int first : ordered) {
        const PairView& key = pair_of[static_cast<std::size_t>(first)];
        const int at = static_cast<int>(keys.size());
        index[static_cast<std::size_t>(first)] = at;
        keys.push_back({std::string(key.job), std::string(key.neighbour), key.where});
        auto [it, fresh] = block_of.try_emplace(key.job, blocks.size());
        if (fresh) blocks.push_back({at, 0, {}, {}, false});
        ++blocks[it->second].size;
    }
    const auto P = static_cast<Eigen::Index>(keys.size());
    Eigen::VectorXd d0(P), ridge(P);
    for (Eigen::Index p = 0; p < P; ++p) {
        const DelayPrior pr = prior(keys[static_cast<std::size_t>(p)]);
        d0[p] = pr.delay;
        ridge[p] = 1 / std::max(pr.sd * pr.sd, 1e-6);
    }
    // Each run's shared intervals with its pairs' positions in its block, looked up once.
    struct Interval {
        double duration_s = 0;
        std::vector<Eigen::Index> pairs;
    };
    struct Run {
        const EndedRun* run = nullptr;
        Block* block = nullptr;
        std::vector<Interval> intervals;
        std::vector<Eigen::Index> touched;  // its pairs, each once
    };
    std::vector<Run> prepared;
    prepared.reserve(used.size());
    std::size_t mention = 0;
    for (const EndedRun* r : used) {
        Run u{r, &blocks[block_of.at(r->job)], {}, {}};
        for (const RunInterval& k : r->intervals) {
            if (!(k.duration_s > 0) || k.neighbours.empty()) {
                mention += k.neighbours.size();
                continue;
            }
            Interval in{k.duration_s, {}};
            for (std::size_t n = 0; n < k.neighbours.size(); ++n) {
                const auto first = static_cast<std::size_t>(mentions[mention++]);
                const Eigen::Index at = index[first] - u.block->from;
                in.pairs.push_back(at);
                if (std::find(u.touched.begin(), u.touched.end(), at) == u.touched.end()) u.touched.push_back(at);
            }
            u.intervals.push_back(std::move(in));
        }
        prepared.push_back(std::move(u));
    }
    Eigen::VectorXd d = d0, row = Eigen::VectorXd::Zero(P);
    // Both in inverse variances: an equation's noise is noise * E; a pair's prior has its sd.
    // The blocks are independent: each is re-weighted until its own delays stop moving.
    for (int pass = 0; pass < std::max(1, o.max_passes); ++pass) {
        bool moving = false;
        for (Block& bl : blocks) {
            if (bl.settled) continue;
            bl.A.setZero(bl.size, bl.size);
            bl.b.setZero(bl.size);
        }
        for (const Run& u : prepared) {
            Block& bl = *u.block;
            if (bl.settled) continue;
            auto mine = row.segment(bl.from, bl.size);
            for (const Interval& k : u.intervals) {
                double D = 0;
                for (Eigen::Index at : k.pairs) D += d[bl.from + at];
                const double work = k.duration_s / (1 + std::max(D, -0.5));
                for (Eigen::Index at : k.pairs) mine[at] += work;
            }
            const double sd = o.noise * u.run->elapsed_s;
            const double w = 1 / (sd * sd);
            for (Eigen::Index i : u.touched) {
                for (Eigen::Index j : u.touched) bl.A(i, j) += w * mine[i] * mine[j];
                bl.b[i] += w * (u.run->elapsed_s - u.run->solo_s) * mine[i];
            }
            for (Eigen::Index i : u.touched) mine[i] = 0;
        }
        for (Block& bl : blocks) {
            if (bl.settled) continue;
            Eigen::MatrixXd M = bl.A;
            M.diagonal() += ridge.segment(bl.from, bl.size);
            // M is the normal equations plus a positive ridge: symmetric positive definite.
            Eigen::VectorXd next =
                M.llt().solve(bl.b + ridge.segment(bl.from, bl.size).cwiseProduct(d0.segment(bl.from, bl.size)));
            next = next.cwiseMax(1.0 / 1.5 - 1.0);  // a neighbour never makes a job more than 1.5x faster
            const double moved = (next - d.segment(bl.from, bl.size)).cwiseAbs().maxCoeff();
            d.segment(bl.from, bl.size) = next;
            bl.settled = moved < 1e-6;
            moving = moving || !bl.settled;
        }
        if (!moving) break;
    }
    for (const Block& bl : blocks)
        for (Eigen::Index i = 0; i < bl.size; ++i) {
            const Eigen::Index p = bl.from + i;
            fit.pairs[keys[static_cast<std::size_t>(p)]] = {d[p], bl.A(i, i) / ridge[p], d0[p]};
        }
    return fit;
}

}  // namespace coloc::model
