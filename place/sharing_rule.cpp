#include "place/sharing_rule.hpp"

#include <algorithm>
#include <cstdio>
#include <limits>
#include <string>
#include <vector>

namespace coloc::place {

namespace {

std::string seconds(double s) {
    char buf[32];
    if (s == std::numeric_limits<double>::infinity()) return "never";
    std::snprintf(buf, sizeof buf, "%.0f s", s);
    return buf;
}

std::string count(double n) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.0f", n);
    return buf;
}

}  // namespace

double gpus_freed_by(const ClusterState& state, const RunningJob& job) {
    double freed = 0;
    for (const Placement& p : job.where)
        for (int g : p.gpus)
            if (const int used = state.used_slots(p.node, g); used > 0) freed += 1.0 / used;
    return freed;
}

bool takes_shared_gpu(const ClusterState& state, const Candidate& c) {
    for (const Placement& p : c.where)
        for (int g : p.gpus)
            if (state.used_slots(p.node, g) > 0) return true;
    return false;
}

namespace {

constexpr double kSlowestSpeed = 0.02;  // a pessimistic speed stays above this (a job still runs)

// A slowdown taken `z` standard deviations of its speed slower (z = 0: as predicted).
double slower_by(double slowdown, double speed_sd, double z) {
    const double s = std::max(1.0, slowdown);
    if (!(z > 0) || !(speed_sd > 0)) return s;
    return std::max(s, 1.0 / std::max(kSlowestSpeed, 1.0 / s - z * speed_sd));
}

// Sharing's price with every speed `z` standard deviations slower (see the header).
struct Price {
    double own = 0, neighbours = 0, head_delay = 0, waiting = 0, jobs_affected = 0;
    double total() const { return own + neighbours + head_delay + waiting; }
};

// Whether any of the candidate's predictions is uncertain (else the pessimistic price is the
// predicted one).
bool uncertain(const Candidate& c) {
    if (c.job_sd > 0) return true;
    for (const NeighbourEffect& e : c.effects)
        if (e.after_sd > 0) return true;
    return false;
}

// How many jobs a change of the cluster's capacity reaches: those queued now and those that
// arrive before the queue drains (as far ahead as the rates were seen).
double jobs_reached(const ClusterState& state, const SharingOutlook& outlook) {
    const ArrivalRates& a = outlook.arrivals;
    double ahead_s = a.seen_s;
    const double spare = state.topology().total_gpus() - a.offered_gpus;
    if (spare > 0) ahead_s = std::min(ahead_s, a.queued_gpu_s / spare);
    return std::max(0, outlook.others_waiting) + a.jobs_per_s * std::max(0.0, ahead_s);
}

// What the price reads of the cluster, gathered once for both prices: each slowed neighbour
// with its time left, and each job on each of the candidate's GPUs with its time left and its
// effect, if any.
struct Facts {
    struct Slowed {
        const NeighbourEffect* effect;
        const RunningJob* job;
        double left_now;
    };
    struct OnGpu {
        int gpu;  // the candidate's GPU, counted 0.. over its placements
        const NeighbourEffect* effect;
        const RunningJob* job;
        double left_now;
    };
    std::vector<Slowed> slowed;
    std::vector<OnGpu> on_gpus;
    int own_gpus = 0;
};

void gather(const ClusterState& state, const Candidate& c, const TimeOutlook& time, Facts& f) {
    f.slowed.clear();
    f.on_gpus.clear();
    f.own_gpus = 0;
    for (const NeighbourEffect& e : c.effects)
        if (const RunningJob* job = state.find(e.id)) f.slowed.push_back({&e, job, time.remaining_s(*job)});
    // A job on the candidate's GPUs is mostly one it slows, found above: its job and time left
    // are taken from there (a job on many of its GPUs would be looked up once per GPU).
    const auto slowed_as = [&](JobId id) -> const Facts::Slowed* {
        for (const Facts::Slowed& n : f.slowed)
            if (n.effect->id == id) return &n;
        return nullptr;
    };
    for (const Placement& pl : c.where)
        for (int g : pl.gpus) {
            for (JobId id : state.jobs_on_gpu(pl.node, g)) {
                if (const Facts::Slowed* n = slowed_as(id))
                    f.on_gpus.push_back({f.own_gpus, n->effect, n->job, n->left_now});
                else if (const RunningJob* job = state.find(id))
                    f.on_gpus.push_back({f.own_gpus, nullptr, job, time.remaining_s(*job)});
            }
            ++f.own_gpus;
        }
}

// With `b`: the price's parts without the first queued job's share, and how fast each can fall
// as the jobs' time left runs out (each lasts at most its pace times longer than that time).
Price price(const ClusterState& state, const JobRequest& request, const Candidate& c, const SharingOutlook& outlook,
            const Facts& f, double z, HoldBound* b = nullptr) {
    Price p;
    const double s = slower_by(c.job_slowdown, c.job_sd, z);
    const double alone_span = outlook.work_s * s;  // the job's time if its neighbours all stay
    const HeadReservation& head = outlook.head;
    double overlap = 0, extra_gpu_s = 0, head_idle_gpus = 0;
    double fastest = 0, neighbours_rate = 0, extra_rate = 0;  // for `b`
    for (const Facts::Slowed& n : f.slowed) {
        const NeighbourEffect& e = *n.effect;
        const double before = std::max(1.0, e.before), after = slower_by(e.after, e.after_sd, z);
        if (!(after > before)) continue;
        const double together = std::min(alone_span, n.left_now * after / before);
        overlap = std::max(overlap, together);
        const double extra = together * (1 - before / after);
        p.neighbours += extra;
        extra_gpu_s += n.job->gpu_count() * extra;  // every GPU of it is held that much longer
        fastest = std::max(fastest, after / before);
        neighbours_rate += after / before - 1;
        extra_rate += n.job->gpu_count() * (after / before - 1);
        // The first queued job waits for this one's GPUs: it starts later by what this one ends
        // past its start, with the GPUs kept for it idle meanwhile.
        if (n.left_now <= head.starts_in_s && n.left_now + extra > head.starts_in_s) {
            const double late = n.left_now + extra - head.starts_in_s;
            if (late > p.head_delay) {
                p.head_delay = late;
                head_idle_gpus = std::max(0.0, head.gpus - gpus_freed_by(state, *n.job));
            }
        }
    }
    // The job's own GPUs: shared for as long as a job on each stays (slowed or not), alone after.
    double shared_sum = 0;
    for (std::size_t k = 0; k < f.on_gpus.size();) {
        const int gpu = f.on_gpus[k].gpu;
        double shared = 0;
        for (; k < f.on_gpus.size() && f.on_gpus[k].gpu == gpu; ++k) {
            const Facts::OnGpu& o = f.on_gpus[k];
            const double pace =
                o.effect ? slower_by(o.effect->after, o.effect->after_sd, z) / std::max(1.0, o.effect->before) : 1.0;
            shared = std::max(shared, std::min(alone_span, o.left_now * std::max(1.0, pace)));
            fastest = std::max(fastest, std::max(1.0, pace));
        }
        shared_sum += shared;
        overlap = std::max(overlap, shared);
    }
    p.own = overlap * (1 - 1 / s);
    const int gpus = request.gpus_per_node * request.nodes;
    extra_gpu_s += f.own_gpus * overlap - shared_sum;  // its GPUs held alone over the overlap, slowed
    extra_gpu_s -= gpus * overlap / s;                 // and its work done meanwhile
    if (b) {
        // Each part falls no faster than the sum of what makes it up: the overlap at the pace of
        // its fastest part, the GPUs shared no faster than... not at all (they only lower it),
        // the work done meanwhile rises (it only lowers the capacity taken: kept as it is now).
        b->own = p.own;
        b->own_rate = fastest * (1 - 1 / s);
        b->neighbours = p.neighbours;
        b->neighbours_rate = neighbours_rate;
        b->extra_gpu_s = extra_gpu_s;
        b->extra_rate = extra_rate + f.own_gpus * fastest;
    }
    extra_gpu_s += p.head_delay * head_idle_gpus;
    p.jobs_affected = jobs_reached(state, outlook);
    // Only a loss counts (see the header).
    if (p.jobs_affected > 0 && extra_gpu_s > 0)
        p.waiting = p.jobs_affected * extra_gpu_s / state.topology().total_gpus();
    return p;
}

// The expected wait for GPUs of its own: `need` idle GPUs (the job's and those of the jobs
// queued ahead) and, when the jobs ahead ask for more than the cluster has, their turns (see the
// header); for a job on several GPUs of a node, its GPUs idle together on each node, a longer
// wait asked for only when the one counted in GPUs does not already pass `enough`.
double wait_for_own(const ClusterState& state, const JobRequest& request, const SharingOutlook& outlook,
                    double enough) {
    const int need = request.gpus_per_node * request.nodes + std::max(0, outlook.gpus_ahead);
    const int total = state.topology().total_gpus();
    double wait = outlook.time->wait_for_idle_gpus(std::min(need, total));
    if (need > total) wait += std::max(0.0, outlook.ahead_gpu_s) * (need - total) / need / total;
    if ((request.gpus_per_node > 1 || request.nodes > 1) && !(wait > enough))
        wait = std::max(wait, outlook.time->wait_for_idle_nodes(request.nodes, request.gpus_per_node));
    return wait;
}

// What a held verdict read, for certainly_held: the nodes and links of the candidate and of the
// jobs whose time left the price took.
// `again`: b holds the reads of an earlier hold, kept when the candidate's nodes and the jobs read
// are the same (the reads are a function of them: a running job's placement never changes).
void keep_reads(const ClusterState& state, const Candidate& c, const Facts& f, HoldBound& b, bool again) {
    b.valid = true;
    b.stamp = state.changes();
    thread_local std::vector<std::int64_t> key;
    key.clear();
    for (const Placement& p : c.where) key.push_back(p.node);
    key.push_back(-1);
    for (const Facts::Slowed& n : f.slowed) key.push_back(static_cast<std::int64_t>(n.job->id));
    for (const Facts::OnGpu& o : f.on_gpus) key.push_back(static_cast<std::int64_t>(o.job->id));
    if (again && key == b.read) return;
    b.read.swap(key);
    b.nodes.clear();
    b.links.clear();
    // Each node and link once (the jobs read share nodes and links).
    thread_local std::vector<char> node_seen, link_seen;
    node_seen.resize(state.topology().nodes().size());
    link_seen.resize(state.topology().link_names().size());
    const auto node = [&](int n) {
        if (node_seen[static_cast<std::size_t>(n)]) return;
        node_seen[static_cast<std::size_t>(n)] = 1;
        b.nodes.push_back(n);
    };
    const auto read = [&](const RunningJob& job) {
        for (const Placement& p : job.where) {
            node(p.node);
            const int link = state.topology().nodes()[static_cast<std::size_t>(p.node)].link;
            if (job.multi_node() && link >= 0 && !link_seen[static_cast<std::size_t>(link)]) {
                link_seen[static_cast<std::size_t>(link)] = 1;
                b.links.push_back(link);
            }
        }
    };
    for (const Placement& p : c.where) node(p.node);
    // Each job once: one on many of the candidate's GPUs is in the facts once per GPU.
    thread_local std::vector<const RunningJob*> jobs;
    jobs.clear();
    for (const Facts::Slowed& n : f.slowed) jobs.push_back(n.job);
    for (const Facts::OnGpu& o : f.on_gpus) jobs.push_back(o.job);
    std::sort(jobs.begin(), jobs.end());
    jobs.erase(std::unique(jobs.begin(), jobs.end()), jobs.end());
    for (const RunningJob* job : jobs) read(*job);
    for (int n : b.nodes) node_seen[static_cast<std::size_t>(n)] = 0;
    for (int l : b.links) link_seen[static_cast<std::size_t>(l)] = 0;
}

}  // namespace

SharingVerdict judge_sharing(const ClusterState& state, const JobRequest& request, const Candidate& c,
                             const SharingOutlook& outlook, HoldBound* bound) {
    const bool again = bound && bound->valid;
    if (bound) bound->valid = false;
    SharingVerdict v;
    v.shares = takes_shared_gpu(state, c);
    if (!v.shares || !outlook.time || !(outlook.work_s > 0)) return v;
    v.weighed = true;
    thread_local Facts facts;
    gather(state, c, *outlook.time, facts);
    const bool margin = uncertain(c);
    const Price expected = price(state, request, c, outlook, facts, 0, margin ? nullptr : bound);
    const Price pessimistic = margin ? price(state, request, c, outlook, facts, 1, bound) : expected;
    v.own_extra_s = pessimistic.own;
    v.neighbours_extra_s = pessimistic.neighbours;
    v.head_delay_s = pessimistic.head_delay;
    v.waiting_extra_s = pessimistic.waiting;
    v.jobs_affected = pessimistic.jobs_affected;
    v.cost_s = pessimistic.total();
    v.expected_cost_s = expected.total();
    v.ahead = std::max(0, outlook.gpus_ahead);
    v.need = request.gpus_per_node * request.nodes + v.ahead;
    v.wait_s = wait_for_own(state, request, outlook, std::max(v.cost_s, v.expected_cost_s));
    v.hold = !(v.wait_s > v.cost_s);
    // Exploration: the expected price lets it share, only the margin holds it, and what it may lose
    // at the pessimistic price is no more than what it gains at the expected one.
    const double gain = v.wait_s - v.expected_cost_s, risk = v.cost_s - v.wait_s;
    if (v.hold && gain > 0 && risk <= gain && outlook.exploration && outlook.exploration->allows()) {
        v.hold = false;
        v.explores = true;
    }
    if (bound && v.hold && v.wait_s < std::numeric_limits<double>::infinity()) {
        keep_reads(state, c, facts, *bound, again);
        bound->at = outlook.time->now();
    }
    return v;
}

bool certainly_held(const ClusterState& state, const JobRequest& request, const SharingOutlook& outlook,
                    const HoldBound& b) {
    if (!b.valid || !outlook.time || !(outlook.work_s > 0)) return false;
    if (outlook.exploration && outlook.exploration->share > 0) return false;  // it might explore now
    if (state.changes() != b.stamp) {
        for (int n : b.nodes)
            if (state.node_change(n) > b.stamp) return false;
        for (int l : b.links)
            if (state.link_change(l) > b.stamp) return false;
    }
    const double d = std::max(0.0, outlook.time->now() - b.at);
    double floor = std::max(0.0, b.own - b.own_rate * d) + std::max(0.0, b.neighbours - b.neighbours_rate * d);
    const int total = state.topology().total_gpus();
    const double reached = jobs_reached(state, outlook), extra = b.extra_gpu_s - b.extra_rate * d;
    if (reached > 0 && extra > 0) floor += reached * extra / total;
    // With room for the rounding of both sides.
    const auto below = [&](double wait) { return wait * (1 + 1e-9) + 1e-6 < floor; };
    // The longest the wait can be: every running job gone, then the turns of the jobs ahead.
    const int need = request.gpus_per_node * request.nodes + std::max(0, outlook.gpus_ahead);
    double longest = outlook.time->longest_wait();
    if (need > total) longest += std::max(0.0, outlook.ahead_gpu_s) * (need - total) / need / total;
    if (below(longest)) return true;
    // Else the wait itself (O(log n) from the expected ends), against the same floor.
    return below(wait_for_own(state, request, outlook, floor));
}

void note_decision(const SharingOutlook& outlook, const SharingVerdict& v) {
    if (!outlook.exploration || !v.weighed) return;
    ++outlook.exploration->weighed;
    if (v.explores) ++outlook.exploration->explored;
}

std::string SharingVerdict::price_basis() const {
    if (!(cost_s > expected_cost_s)) return " (as predicted)";
    return " (at a pessimistic speed; " + seconds(expected_cost_s) + " in all as predicted, margin " +
           seconds(cost_s - expected_cost_s) + ")";
}

std::string SharingVerdict::why() const {
    if (!shares) return "GPUs of its own: never held";
    if (!weighed) return "shares a GPU: no queue or run time is known to weigh a wait against, so it is not held";
    const double cost = std::max(cost_s, expected_cost_s);
    std::string more;
    if (head_delay_s > 0) more += ", " + seconds(head_delay_s) + " to the first queued job";
    if (waiting_extra_s > 0)
        more += " and " + seconds(waiting_extra_s) + " to the " + count(jobs_affected) + " jobs waiting or to come";
    if (waiting_extra_s < 0)
        more +=
            " and saves " + seconds(-waiting_extra_s) + " to the " + count(jobs_affected) + " jobs waiting or to come";
    return std::string(hold       ? "held: "
                       : explores ? "shares, exploring: "
                                  : "shares: ") +
           "sharing adds " + seconds(own_extra_s) + " to the job, " + seconds(neighbours_extra_s) +
           " to its neighbours" + more + price_basis() + "; GPUs of its own expected in " +
           (wait_s >= cost && !hold ? "over " + seconds(cost) : seconds(wait_s)) + " (" + std::to_string(need) +
           " GPUs wanted, " + std::to_string(ahead) + " of them by jobs queued ahead)";
}

}  // namespace coloc::place
