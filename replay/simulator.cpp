#include "replay/simulator.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <deque>
#include <map>
#include <numbers>
#include <queue>
#include <random>
#include <set>
#include <stdexcept>
#include <tuple>
#include <unordered_map>
#include <utility>

#include "place/expected_ends.hpp"
#include "place/queue_demand.hpp"
#include "place/sharing_rule.hpp"
#include "replay/held_jobs.hpp"

namespace coloc::replay {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// Min-heap of running jobs by predicted end, with positions so that a job's key can move.
class EndHeap {
public:
    explicit EndHeap(std::size_t jobs) : pos_(jobs, -1) {}
    bool empty() const { return heap_.empty(); }
    int top() const { return heap_.front(); }
    void set(int job, double key, std::vector<double>& keys) {
        keys[static_cast<std::size_t>(job)] = key;
        int at = pos_[static_cast<std::size_t>(job)];
        if (at < 0) {
            at = static_cast<int>(heap_.size());
            heap_.push_back(job);
            pos_[static_cast<std::size_t>(job)] = at;
        }
        up(at, keys);
        down(pos_[static_cast<std::size_t>(job)], keys);
    }
    void erase(int job, const std::vector<double>& keys) {
        int at = pos_[static_cast<std::size_t>(job)];
        if (at < 0) return;
        int last = heap_.back();
        heap_.pop_back();
        pos_[static_cast<std::size_t>(job)] = -1;
        if (last == job) return;
        heap_[static_cast<std::size_t>(at)] = last;
        pos_[static_cast<std::size_t>(last)] = at;
        up(at, keys);
        down(pos_[static_cast<std::size_t>(last)], keys);
    }

private:
    bool less(int a, int b, const std::vector<double>& k) const {
        double ka = k[static_cast<std::size_t>(a)], kb = k[static_cast<std::size_t>(b)];
        return ka < kb || (ka == kb && a < b);
    }
    void place(int at, int job) {
        heap_[static_cast<std::size_t>(at)] = job;
        pos_[static_cast<std::size_t>(job)] = at;
    }
    void up(int at, const std::vector<double>& k) {
        int job = heap_[static_cast<std::size_t>(at)];
        while (at > 0) {
            int parent = (at - 1) / 2;
            if (!less(job, heap_[static_cast<std::size_t>(parent)], k)) break;
            place(at, heap_[static_cast<std::size_t>(parent)]);
            at = parent;
        }
        place(at, job);
    }
    void down(int at, const std::vector<double>& k) {
        const int n = static_cast<int>(heap_.size());
        int job = heap_[static_cast<std::size_t>(at)];
        while (true) {
            int child = 2 * at + 1;
            if (child >= n) break;
            if (child + 1 < n &&
                less(heap_[static_cast<std::size_t>(child + 1)], heap_[static_cast<std::size_t>(child)], k))
                ++child;
            if (!less(heap_[static_cast<std::size_t>(child)], job, k)) break;
            place(at, heap_[static_cast<std::size_t>(child)]);
            at = child;
        }
        place(at, job);
    }

    std::vector<int> heap_;
    std::vector<int> pos_;
};

class Sim final : public place::TimeOutlook {
public:
    Sim(const place::Topology& topo, const place::Policy& policy, place::Capacity units,
        const model::InterferenceModel& truth, const std::vector<ReplayJob>& jobs, const SimOptions& options)
        : topo_(topo),
          policy_(policy),
          units_(units),
          truth_(truth),
          jobs_(jobs),
          options_(options),
          state_(topo),
          heap_(jobs.size()),
          finish_(jobs.size(), kInf),
          pace_(jobs.size()),
          ends_(state_),
          queued_(jobs.size(), 0),
          demand_(options.arrival_window_s),
          stamp_(jobs.size(), 0) {
        run_.policy = policy.name();
        run_.jobs.resize(jobs.size());
        for (std::size_t i = 0; i < jobs.size(); ++i) pace_[i].remaining = jobs[i].work;
        int base = 0;
        for (std::size_t n = 0; n < topo.nodes().size(); ++n) {
            gpu_base_.push_back(base);
            base += topo.type_of(static_cast<int>(n)).gpus;
        }
        released_.assign(static_cast<std::size_t>(base), 0);
        idle_by_shadow_.assign(static_cast<std::size_t>(base), 0);
        past_shadow_.assign(topo.nodes().size(), 0);
        nodes_by_past_.assign(static_cast<std::size_t>(state_.max_gpus_per_node() + 1), 0);
        nodes_by_past_[0] = static_cast<int>(topo.nodes().size());
        exploration_.share = options.explore_share;
        node_units_.assign(topo.nodes().size(), -1);
        setup_learning();
    }

    // What the sharing rule asks (place::TimeOutlook): the ends remaining_s() expects, kept
    // in place::ExpectedEnds as jobs start, end and change pace.
    double wait_for_idle_gpus(int gpus) const override { return ends_.wait_for_idle_gpus(now_, gpus); }
    double wait_for_idle_nodes(int nodes, int per_node) const override {
        return ends_.wait_for_idle_nodes(now_, nodes, per_node);
    }
    double now() const override { return now_; }
    double longest_wait() const override { return ends_.longest_wait(now_); }
    double remaining_s(const place::RunningJob& job) const override {
        const std::size_t i = static_cast<std::size_t>(job.id);
        if (options_.planner)
            return std::max(0.0, pace_[i].planned_left - pace_[i].planned_rate * (now_ - pace_[i].last)) /
                   pace_[i].planned_rate;
        const double end = job.since + jobs_[i].limit;
        return end > now_ ? end - now_ : 0.0;
    }

    PolicyRun run() {
        auto t0 = std::chrono::steady_clock::now();
        const std::size_t n = jobs_.size();
        std::size_t next_arrival = 0, finished = 0, reported = 0;
        const double delay = options_.admission_delay_s;
        while (next_arrival < n || !gated_.empty() || !heap_.empty() || !passes_.empty()) {
            double t_end = heap_.empty() ? kInf : finish_[static_cast<std::size_t>(heap_.top())];
            const double t_sub = next_arrival < n ? jobs_[next_arrival].submit : kInf;
            const double t_due = gated_.empty() ? kInf : jobs_[static_cast<std::size_t>(gated_.front())].submit + delay;
            const double t_event = std::min({t_end, t_sub, t_due, passes_.empty() ? kInf : passes_.front()});
            const double now = std::min(t_event, next_report());
            now_ = now;
            deliver_due_reports(now);
            if (now < t_event) continue;  // only reports: nothing a pass would see anew
            bool ended = false;
            while (!heap_.empty() && finish_[static_cast<std::size_t>(heap_.top())] <= now) {
                end(heap_.top(), now);
                ended = true;
                ++finished;
            }
            const bool was_empty = queue_live_ == 0;
            const std::size_t first_new = queue_.size();
            while (next_arrival < n && jobs_[next_arrival].submit <= now) submitted(static_cast<int>(next_arrival++));
            while (!gated_.empty() && jobs_[static_cast<std::size_t>(gated_.front())].submit + delay <= now) {
                enqueue(gated_.front());
                gated_.pop_front();
            }
            pass_when_due(now, ended, was_empty, first_new);
            note_busy(now);
            if (options_.observer) options_.observer(state_, now);
            if (options_.progress && finished - reported >= std::max<std::size_t>(n / 200, 1)) {
                reported = finished;
                options_.progress(finished, n);
            }
        }
        for (std::size_t i = 0; i < n; ++i)
            if (run_.jobs[i].start < 0) ++run_.never_started;
        if (options_.progress) options_.progress(finished, n);
        run_.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        return std::move(run_);
    }

private:
    // ---- queue -------------------------------------------------------------------------
    // A submission. Under admission (admission_delay_s > 0) it joins the queue once admission
    // weighed it, unless it takes a standing offer (daemon/steering/standing_offers.hpp): while
    // no job a pass turned down waits, a one-node job that fits a node's idle GPUs, less those
    // the jobs queued since the last pass will take, joins at once, on the node with the fewest
    // that fit, and is placed there as colocd's launch places it (no sharing rule).
    void submitted(int j) {
        const ReplayJob& job = jobs_[static_cast<std::size_t>(j)];
        if (options_.admission_delay_s > 0 && options_.standing_offers && held_after_pass_ == 0 && job.nodes == 1) {
            claimed_.clear();
            for (std::size_t pos = std::max(passed_upto_, head_); pos < queue_.size(); ++pos) {
                const int q = queue_[pos];
                const ReplayJob& fresh = jobs_[static_cast<std::size_t>(q)];
                if (!queued_[static_cast<std::size_t>(q)] || fresh.nodes != 1) continue;
                if (const int n = offer_node(fresh.gpus_per_node); n >= 0) claimed_[n] += fresh.gpus_per_node;
            }
            if (const int node = offer_node(job.gpus_per_node); node >= 0) {
                offered_node_[j] = node;
                enqueue(j);
                return;
            }
        }
        gated_.push_back(j);
    }
    // The node with the fewest idle GPUs (less claimed_) that fit `gpus`, the lowest of those;
    // -1 when none.
    int offer_node(int gpus) const {
        int best = -1, best_idle = std::numeric_limits<int>::max();
        const auto consider = [&](int n, int idle) {
            if (idle >= gpus && (idle < best_idle || (idle == best_idle && n < best))) best = n, best_idle = idle;
        };
        for (const auto& [n, taken] : claimed_) consider(n, state_.idle_gpus(n) - taken);
        for (int v = std::max(1, gpus); v <= state_.max_gpus_per_node() && v <= best_idle; ++v) {
            const place::NodeSet& nodes = state_.nodes_with(place::Capacity::Idle, v);
            for (int n = nodes.next(-1); n >= 0; n = nodes.next(n))
                if (!claimed_.count(n)) {
                    consider(n, v);
                    break;
                }
        }
        return best;
    }
    void enqueue(int j) {
        const ReplayJob& job = jobs_[static_cast<std::size_t>(j)];
        queue_.push_back(j);
        queued_[static_cast<std::size_t>(j)] = 1;
        ++queue_live_;
        queued_gpus_ += job.gpus();
        demand_.submitted(job.submit, job.gpus_per_node, job.nodes, job.limit, job.profile);
        demand_.queued(job.gpus_per_node, job.nodes, job.limit, +1, job.profile);
        ++run_.events;
    }
    void dequeue(std::size_t pos) {
        const ReplayJob& job = jobs_[static_cast<std::size_t>(queue_[pos])];
        queued_[static_cast<std::size_t>(queue_[pos])] = 0;
        --queue_live_;
        queued_gpus_ -= job.gpus();
        demand_.queued(job.gpus_per_node, job.nodes, job.limit, -1, job.profile);
        while (head_ < queue_.size() && !queued_[static_cast<std::size_t>(queue_[head_])]) ++head_;
        if (head_ > 4096 && head_ * 2 > queue_.size()) compact();
    }
    void compact() {
        std::vector<int> live;
        live.reserve(queue_live_);
        for (std::size_t i = head_; i < queue_.size(); ++i)
            if (queued_[static_cast<std::size_t>(queue_[i])]) live.push_back(queue_[i]);
        queue_.swap(live);
        head_ = 0;
    }

    // ---- capacity ----------------------------------------------------------------------
    bool fits(const ReplayJob& j) const { return state_.nodes_with_at_least(units_, j.gpus_per_node) >= j.nodes; }
    int free_units(place::Capacity kind) const {
        int total = 0;
        for (int v = 1; v <= state_.max_gpus_per_node(); ++v) total += v * state_.nodes_with(kind, v).size();
        return total;
    }
    std::size_t flat(int node, int gpu) const {
        return static_cast<std::size_t>(gpu_base_[static_cast<std::size_t>(node)] + gpu);
    }
    bool is_unit(place::Capacity kind, int node, int used) const {
        return kind == place::Capacity::Idle ? used == 0 : used < topo_.type_of(node).slots_per_gpu;
    }

    place::JobRequest request(int j) const {
        place::JobRequest r;
        r.id = static_cast<place::JobId>(j);
        r.profile = jobs_[static_cast<std::size_t>(j)].profile;
        r.gpus_per_node = jobs_[static_cast<std::size_t>(j)].gpus_per_node;
        r.nodes = jobs_[static_cast<std::size_t>(j)].nodes;
        if (!offered_node_.empty())
            if (const auto it = offered_node_.find(j); it != offered_node_.end()) r.allowed_nodes = {it->second};
        return r;
    }

    // Asks the policy; starts the job when placed. `gpus_ahead`: GPUs the jobs queued ahead of
    // it ask for, `ahead_gpu_s` the GPU-seconds they ask for; `head`: the first queued job's
    // reservation, for a job behind it.
    // `behind_head`: a backfill candidate; one that runs past the shadow (at the pace its policy
    // predicts for it there) may take only what the head spares (see backfill), and ran_past_
    // says whether it did.
    bool try_start(int j, double now, int gpus_ahead, double ahead_gpu_s, place::HeadReservation head = {},
                   bool behind_head = false) {
        place::JobRequest r = request(j);
        demand_.advance(now);
        place::SharingOutlook outlook{.time = this,
                                      .work_s = jobs_[static_cast<std::size_t>(j)].limit,
                                      .gpus_ahead = gpus_ahead,
                                      .ahead_gpu_s = ahead_gpu_s,
                                      .others_waiting = static_cast<int>(queue_live_) - 1,
                                      .arrivals = demand_.rates(now),
                                      .head = head,
                                      .exploration = options_.explore_share > 0 ? &exploration_ : nullptr,
                                      .nodes_wanted = &demand_.nodes_wanted(),
                                      .in_words = false};
        if (options_.outlook && r.allowed_nodes.empty()) r.outlook = &outlook;  // an offer's job: as launch places it
        if (turned_down_.still_turned_down(state_, r, now)) {
            ++run_.declined;
            ++run_.unchanged;
            return false;
        }
        // Only a search prices partners (a held job's verdict is weighed again without them).
        if (options_.outlook) r.partners = &demand_.partners(now);
        ++run_.decisions;
        place::Decision d = policy_.place(state_, r);
        if (!d.placed) {
            ++run_.declined;
            turned_down_.remember(j, state_, d, now);
            return false;
        }
        const ReplayJob& job = jobs_[static_cast<std::size_t>(j)];
        ran_past_ = behind_head && now + job.limit * std::max(1.0, d.chosen.job_slowdown) > shadow_;
        if (ran_past_ && !spares_idle_only_) taken_ = job.gpus();
        if (ran_past_ && spares_idle_only_) {
            taken_ = 0;
            for (const place::Placement& p : d.chosen.where)
                for (int g : p.gpus) taken_ += state_.used_slots(p.node, g) == 0 || idle_by_shadow_[flat(p.node, g)];
        }
        if (ran_past_ && taken_ > extra_) {
            blocked_[j] = {options_.learning.judged ? options_.learning.judged->settled_version() : 0, reservation_};
            return false;
        }
        if (ran_past_ && spares_idle_only_)
            for (const place::Placement& p : d.chosen.where)
                for (int g : p.gpus) idle_by_shadow_[flat(p.node, g)] = 0;  // taken: no longer the head's
        turned_down_.forget(j);
        blocked_.erase(j);
        if (!offered_node_.empty()) offered_node_.erase(j);
        start(j, std::move(d.chosen.where), now);
        return true;
    }

    // ---- scheduling passes ---------------------------------------------------------------
    // After the events at `now`: a pass at once, or (pass_interval_s) half an interval later,
    // the expected wait for Slurm's next pass, whose phase a log of whole seconds does not tell;
    // a pass starts what it can of everything that happened before it. `ended`: a job ended;
    // `was_empty`: the queue was empty before the jobs from `first_new` on arrived. Either
    // means the last pass's reservation no longer holds (a full pass); else only new jobs can
    // start (the queue is not compacted between passes: dequeue is, in a pass).
    void pass_when_due(double now, bool ended, bool was_empty, std::size_t first_new) {
        const bool arrived = first_new < queue_.size();
        const double lag = options_.pass_interval_s / 2;
        if (!(lag > 0)) {
            if (ended || was_empty)
                full_pass(now);
            else
                arrivals_pass(now, first_new);
            passed();
            return;
        }
        if (ended || arrived) {
            if (!pass_owed_) {
                pass_owed_ = true;
                pass_full_ = false;
                pass_first_new_ = first_new;
            }
            pass_full_ = pass_full_ || ended || was_empty;
            if (passes_.empty() || passes_.back() < now + lag) passes_.push_back(now + lag);
        }
        if (passes_.empty() || passes_.front() > now) return;
        while (!passes_.empty() && passes_.front() <= now) passes_.pop_front();
        if (!pass_owed_) return;  // what happened was seen by an earlier pass
        pass_owed_ = false;
        if (pass_full_)
            full_pass(now);
        else
            arrivals_pass(now, pass_first_new_);
        passed();
    }
    // After a pass: the jobs still queued were turned down (colocd holds them); those queued from
    // here on are fresh until the next pass (between passes nothing leaves the queue).
    void passed() {
        held_after_pass_ = queue_live_;
        passed_upto_ = queue_.size();
    }

    void full_pass(double now) {
        while (head_ < queue_.size()) {
            int h = queue_[head_];
            if (!fits(jobs_[static_cast<std::size_t>(h)])) {
                reserve(now, h, false);
                break;
            }
            if (!try_start(h, now, 0, 0)) {
                reserve(now, h, true);
                break;
            }
            dequeue(head_);
        }
        if (head_ >= queue_.size()) return;
        const ReplayJob& head = jobs_[static_cast<std::size_t>(queue_[head_])];
        backfill(now, head_ + 1, head.gpus(), head.gpus() * head.limit);
    }

    // Only new jobs arrived: the state is as the last pass left it, so its reservation holds
    // and only the new jobs can be candidates.
    void arrivals_pass(double now, std::size_t first_new) {
        if (head_ >= queue_.size()) return;
        std::int64_t arrived = 0;
        double arrived_gpu_s = 0;
        for (std::size_t pos = first_new; pos < queue_.size(); ++pos) {
            const ReplayJob& job = jobs_[static_cast<std::size_t>(queue_[pos])];
            arrived += job.gpus();
            arrived_gpu_s += job.gpus() * job.limit;
        }
        backfill(now, std::max(first_new, head_ + 1), static_cast<int>(queued_gpus_ - arrived),
                 demand_.queued_gpu_s() - arrived_gpu_s);
    }

    // `ahead`: GPUs asked for by the queued jobs before `from`; `ahead_gpu_s`: their GPU-seconds.
    void backfill(double now, std::size_t from, int ahead, double ahead_gpu_s) {
        int examined = 0;
        for (std::size_t pos = from; pos < queue_.size() && examined < options_.backfill_depth; ++pos) {
            int q = queue_[pos];
            if (!queued_[static_cast<std::size_t>(q)]) continue;
            ++examined;
            const ReplayJob& job = jobs_[static_cast<std::size_t>(q)];
            // Past the shadow (by its time limit, or slowed past it where it shares) a job may take
            // only what the head can spare (extra_ units). Counted in the units it is placed in,
            // that is all of its GPUs; a head waiting for idle GPUs while jobs take slots is
            // spared what is idle by its start, which only the placement tells (idle now, or
            // shared with jobs that end by then). Before a search, what its time limit alone
            // tells rules out placements that must fail.
            const bool past_by_limit = now + job.limit > shadow_;
            if (!fits(job) || still_blocked(q) || (past_by_limit && !spares_idle_only_ && job.gpus() > extra_) ||
                (past_by_limit && spares_idle_only_ && !may_fit_past_shadow(job, extra_)) ||
                !try_start(q, now, ahead, ahead_gpu_s, {shadow_ - now, head_gpus_}, true)) {
                ahead += job.gpus();
                ahead_gpu_s += job.gpus() * job.limit;
                continue;
            }
            ++run_.backfilled;
            if (ran_past_) extra_ -= taken_;
            dequeue(pos);
        }
    }

    // Whether `j`, placed where it would take more than the head spares, would be again: the
    // reservation and the model it was placed by are the same, and no end opened a slot past the
    // shadow. (What this leaves out: a GPU a start leaves open past the shadow is found at the
    // next such change; searching every blocked job at every event made bench/replay-quality
    // twice as slow.)
    bool still_blocked(int j) {
        const auto it = blocked_.find(j);
        if (it == blocked_.end()) return false;
        const model::InterferenceModel* judged = options_.learning.judged;
        if (it->second != std::pair{judged ? judged->settled_version() : 0, reservation_}) return false;
        ++run_.declined;
        ++run_.unchanged;
        return true;
    }

    // Whether `job` may be placed taking at most `spare` of the GPUs idle by the shadow: its other
    // GPUs must have a free slot and a job that runs past the shadow. A necessary condition, so
    // that a deep queue is not searched for placements that must fail. The nodes with the most
    // such GPUs first: the fewest of the spared GPUs a placement on `nodes` nodes needs.
    bool may_fit_past_shadow(const ReplayJob& job, int spare) const {
        int nodes = std::max(1, job.nodes), least = 0;
        for (int v = static_cast<int>(nodes_by_past_.size()) - 1; v >= 0 && nodes > 0; --v) {
            const int here = std::min(nodes, nodes_by_past_[static_cast<std::size_t>(v)]);
            least += here * std::max(0, job.gpus_per_node - v);
            nodes -= here;
        }
        return nodes == 0 && least <= spare;
    }
    // Node `n`'s count of GPUs with a free slot whose jobs run past the shadow, brought up to date;
    // true when it grew.
    bool count_past_shadow(int n) {
        int past = 0;
        for (int g = 0; g < topo_.type_of(n).gpus; ++g) {
            const int used = state_.used_slots(n, g);
            past += used > 0 && used < topo_.type_of(n).slots_per_gpu && !idle_by_shadow_[flat(n, g)];
        }
        int& was = past_shadow_[static_cast<std::size_t>(n)];
        --nodes_by_past_[static_cast<std::size_t>(was)];
        ++nodes_by_past_[static_cast<std::size_t>(past)];
        const bool more = past > was;
        was = past;
        return more;
    }
    void count_past_shadow(const std::vector<place::Placement>& where) {
        for (const place::Placement& p : where) count_past_shadow(p.node);
    }

    // The head job's reservation: walk the running jobs by expected end (start + time limit),
    // giving their GPUs back on a scratch copy, until the head fits. `declined`: it fits now but
    // the policy declined, so at least one job must end first, and it waits for idle GPUs.
    void reserve(double now, int h, bool declined) {
        const ReplayJob& head = jobs_[static_cast<std::size_t>(h)];
        // Declined, the head waits for GPUs of its own (the sharing rule held it): planned in idle
        // GPUs, so that jobs behind it that take GPUs idle by its start (idle now, or freed on the
        // way: idle_by_shadow_) and run past it are held as colocd's admission holds them; jobs
        // that share a GPU busy past its start are not.
        const place::Capacity kind = declined ? place::Capacity::Idle : units_;
        spares_idle_only_ = kind != units_;
        for (std::size_t key : freed_by_shadow_) idle_by_shadow_[key] = 0;
        for (int n : marked_nodes_) count_past_shadow(n);
        freed_by_shadow_.clear();
        marked_nodes_.clear();
        const int k = head.gpus_per_node;
        int count = state_.nodes_with_at_least(kind, k);
        int free = free_units(kind);
        head_gpus_ = head.gpus();
        shadow_ = kInf;
        int walked = 0;
        double planned = now;  // the end the shadow is set by, unclamped
        for (const auto& [expected, r] : expected_) {
            if (count >= head.nodes && (walked > 0 || !declined)) break;
            const place::RunningJob* job = state_.find(static_cast<place::JobId>(r));
            for (const place::Placement& p : job->where) {
                int& units = node_units_[static_cast<std::size_t>(p.node)];
                if (units < 0) {
                    units = state_.capacity(kind, p.node);
                    touched_nodes_.push_back(p.node);
                }
                for (int g : p.gpus) {
                    const std::size_t key = flat(p.node, g);
                    if (released_[key]++ == 0) touched_gpus_.push_back(key);
                    int used = state_.used_slots(p.node, g) - released_[key];
                    if (!is_unit(kind, p.node, used + 1) && is_unit(kind, p.node, used)) {
                        if (spares_idle_only_) {
                            idle_by_shadow_[key] = 1;
                            freed_by_shadow_.push_back(key);
                            marked_nodes_.push_back(p.node);
                        }
                        ++free;
                        if (++units == k) ++count;
                    }
                }
            }
            ++walked;
            shadow_ = std::max(expected, now);
            planned = expected;
        }
        if (count < head.nodes) shadow_ = planned = kInf;  // it never fits: nothing to protect
        extra_ = std::max(0, free - head.gpus());
        // The reservation as planned (a shadow that only follows the clock, overdue ends, opens
        // nothing to a job blocked by it).
        if (std::tuple{h, planned, extra_, spares_idle_only_} != reserved_) ++reservation_;
        reserved_ = {h, planned, extra_, spares_idle_only_};
        for (int n : marked_nodes_) count_past_shadow(n);
        for (std::size_t key : touched_gpus_) released_[key] = 0;
        for (int node : touched_nodes_) node_units_[static_cast<std::size_t>(node)] = -1;
        touched_gpus_.clear();
        touched_nodes_.clear();
    }

    // ---- progress under the truth model -----------------------------------------------------
    // The running jobs whose neighbours change when `j` starts or ends (j excluded).
    const std::vector<int>& affected_by(const place::RunningJob& job) {
        affected_.clear();
        ++epoch_;
        stamp_[static_cast<std::size_t>(job.id)] = epoch_;
        auto add = [&](place::JobId id) {
            if (stamp_[static_cast<std::size_t>(id)] == epoch_) return;
            stamp_[static_cast<std::size_t>(id)] = epoch_;
            affected_.push_back(static_cast<int>(id));
        };
        for (const place::Placement& p : job.where) {
            for (place::JobId id : state_.jobs_on_node(p.node)) add(id);
            int link = topo_.nodes()[static_cast<std::size_t>(p.node)].link;
            if (job.multi_node() && link >= 0)
                for (place::JobId id : state_.multi_node_jobs_on_link(link)) add(id);
        }
        return affected_;
    }

    void advance(int j, double now) {
        std::size_t i = static_cast<std::size_t>(j);
        Pace& p = pace_[i];
        p.remaining = std::max(0.0, p.remaining - p.rate * (now - p.last));
        if (options_.planner) p.planned_left = std::max(0.0, p.planned_left - p.planned_rate * (now - p.last));
        p.last = now;
    }

    void rerate(int j, double now) {
        std::size_t i = static_cast<std::size_t>(j);
        const place::RunningJob* job = state_.find(static_cast<place::JobId>(j));
        neighbours_.clear();
        state_.neighbours_of(*job, neighbours_);
        if (options_.learning.learner) restretch(j, now);  // before the rate moves: the stretch ends at the old one
        double slowdown = truth_.slowdown(*job->profile, neighbours_);
        if (!(slowdown >= 1.0)) slowdown = 1.0;
        Pace& p = pace_[i];
        p.rate = 1.0 / slowdown;
        if (options_.planner)
            p.planned_rate = 1.0 / std::max(1.0, options_.planner->slowdown(*job->profile, neighbours_));
        heap_.set(j, now + p.remaining / p.rate, finish_);
        // The end remaining_s() expects moves with the planner's pace.
        ends_.set(static_cast<place::JobId>(j),
                  options_.planner ? now + p.planned_left / p.planned_rate : job->since + jobs_[i].limit);
    }

    void start(int j, std::vector<place::Placement> where, double now) {
        const ReplayJob& job = jobs_[static_cast<std::size_t>(j)];
        place::RunningJob rj;
        rj.id = static_cast<place::JobId>(j);
        rj.profile = job.profile;
        rj.where = std::move(where);
        rj.since = now;
        if (!state_.add(std::move(rj)))
            throw std::logic_error("policy '" + policy_.name() + "' chose a placement that does not fit");
        run_.jobs[static_cast<std::size_t>(j)].start = now;
        pace_[static_cast<std::size_t>(j)].last = now;
        if (options_.learning.learner) stretch_[static_cast<std::size_t>(j)].since = now;
        if (options_.planner) pace_[static_cast<std::size_t>(j)].planned_left = job.limit;
        ++run_.events;
        const place::RunningJob& placed = *state_.find(static_cast<place::JobId>(j));
        count_past_shadow(placed.where);
        for (const place::Placement& p : placed.where)
            for (int g : p.gpus) shared_ += state_.used_slots(p.node, g) == 2;  // its second job: now shared
        for (int a : affected_by(placed)) advance(a, now);
        for (int a : affected_) rerate(a, now);
        rerate(j, now);
        if (options_.learning.judged) note_model_error(j, now);  // neighbours_: j's, from rerate
        ++started_;
        expected_.emplace(now + job.limit, j);
    }

    void end(int j, double now) {
        const place::RunningJob& job = *state_.find(static_cast<place::JobId>(j));
        const int first_node = job.where.empty() ? -1 : job.where.front().node;
        if (options_.learning.learner) close_stretch(j, now);
        const std::vector<int>& affected = affected_by(job);
        for (int a : affected) advance(a, now);
        pace_[static_cast<std::size_t>(j)].remaining = 0;
        expected_.erase({run_.jobs[static_cast<std::size_t>(j)].start + jobs_[static_cast<std::size_t>(j)].limit, j});
        heap_.erase(j, finish_);
        for (const place::Placement& p : job.where)
            for (int g : p.gpus) shared_ -= state_.used_slots(p.node, g) == 2;  // down to one job: no longer shared
        ended_nodes_.clear();
        for (const place::Placement& p : job.where) ended_nodes_.push_back(p.node);
        state_.remove(static_cast<place::JobId>(j));
        for (int n : ended_nodes_)
            if (count_past_shadow(n)) ++reservation_;  // a slot opened past the shadow: a blocked job may take it
        ends_.erase(static_cast<place::JobId>(j));
        run_.jobs[static_cast<std::size_t>(j)].end = now;
        ++run_.events;
        for (int a : affected) rerate(a, now);
        if (options_.learning.learner) learn_ended(j, first_node, now);
    }

    // ---- learning (SimLearning) ------------------------------------------------------------
    void setup_learning() {
        const SimLearning& l = options_.learning;
        turned_down_.follow(l.judged, &policy_, l.report_interval_s);
        if (!l.learner) return;
        run_.learned = true;
        stretch_.resize(jobs_.size());
        rng_.seed(l.seed);
    }

    // A standard normal draw (Box-Muller on the generator's bits: the same on every platform).
    double normal() {
        const double u1 = (static_cast<double>(rng_() >> 11) + 0.5) * 0x1.0p-53;
        const double u2 = static_cast<double>(rng_() >> 11) * 0x1.0p-53;
        return std::sqrt(-2 * std::log(u1)) * std::cos(2 * std::numbers::pi * u2);
    }

    static bool same(const std::vector<model::Neighbour>& a, const std::vector<model::Neighbour>& b) {
        return std::equal(a.begin(), a.end(), b.begin(), b.end(),
                          [](const model::Neighbour& x, const model::Neighbour& y) {
                              return x.profile == y.profile && x.where == y.where && x.gpus == y.gpus &&
                                     x.hardware == y.hardware && x.phase_offset_s == y.phase_offset_s;
                          });
    }

    // j was re-rated and its neighbours are neighbours_ now: a new stretch when they changed.
    void restretch(int j, double now) {
        Stretch& st = stretch_[static_cast<std::size_t>(j)];
        if (st.since < now && same(st.neighbours, neighbours_)) return;  // a stretch of j's goes on
        close_stretch(j, now);
        st.neighbours = neighbours_;
        schedule_report(j);
    }

    // The stretch's next report, when it has neighbours and one is still to come: reports
    // reach the learner when they are due, as colocd's do, not when the stretch ends (a
    // pairing's first run would teach nothing before it ended).
    void schedule_report(int j) {
        const Stretch& st = stretch_[static_cast<std::size_t>(j)];
        const SimLearning& l = options_.learning;
        if (st.neighbours.empty() || !(l.report_interval_s > 0) || st.reported >= l.max_reports) return;
        due_reports_.push({st.since + (st.reported + 1) * l.report_interval_s, j, st.serial});
    }

    // The reports due by `now` in stretches still going on.
    void deliver_due_reports(double now) {
        while (!due_reports_.empty() && due_reports_.top().at <= now) {
            const DueReport r = due_reports_.top();
            due_reports_.pop();
            Stretch& st = stretch_[static_cast<std::size_t>(r.job)];
            if (st.serial != r.serial) continue;  // its stretch ended and delivered what was due
            report(r.job, st.neighbours);
            ++st.reported;
            schedule_report(r.job);
        }
    }
    double next_report() const { return due_reports_.empty() ? kInf : due_reports_.top().at; }

    // One iteration report of j's, from its stretch now: the truth's pace with noise.
    void report(int j, const std::vector<model::Neighbour>& neighbours) {
        const std::size_t i = static_cast<std::size_t>(j);
        const double measured = std::max(1.0, std::exp(options_.learning.noise_sd * normal()) / pace_[i].rate);
        options_.learning.learner->observe(*jobs_[i].profile, neighbours, measured);
        ++run_.reports;
    }

    // The stretch of unchanged neighbours that ends now: its reports (pace_[j].rate is still the
    // truth's pace in it) and, for the elapsed learning, its interval.
    void close_stretch(int j, double now) {
        const std::size_t i = static_cast<std::size_t>(j);
        Stretch& st = stretch_[i];
        const double length = now - st.since;
        st.since = now;
        const int reported = std::exchange(st.reported, 0);
        ++st.serial;  // what is still queued for the stretch is stale now
        if (!(length > 0)) return;
        const SimLearning& l = options_.learning;
        // A job alone teaches nothing about pairs (colocd's learner passes solo reports by).
        // The reports due by now and not yet delivered (those due at this very moment); with
        // no interval, every report at the stretch's end.
        if (!st.neighbours.empty()) {
            const double due = l.report_interval_s > 0 ? std::floor(length / l.report_interval_s) : l.max_reports;
            for (int r = reported; r < std::min<double>(due, l.max_reports); ++r) report(j, st.neighbours);
        }
        model::RunInterval in;
        in.duration_s = length;
        for (const model::Neighbour& n : st.neighbours) in.neighbours.emplace_back(n.profile->name, n.where);
        if (!st.intervals.empty() && st.intervals.back().neighbours == in.neighbours)
            st.intervals.back().duration_s += length;
        else
            st.intervals.push_back(std::move(in));
    }

    // j ended: its run joins its GPU type's window (as colocd's daemon/service/elapsed.cpp),
    // which says when the pair delays are refitted.
    void learn_ended(int j, int node, double now) {
        const std::size_t i = static_cast<std::size_t>(j);
        Stretch st = std::move(stretch_[i]);
        stretch_[i] = Stretch{};
        stretch_[i].serial = st.serial;  // its queued reports stay stale
        if (node < 0) return;
        model::EndedRun r;
        r.job = jobs_[i].profile->name;
        r.solo_s = jobs_[i].work;  // what its solo runs took
        r.elapsed_s = now - run_.jobs[i].start;
        r.gpus = jobs_[i].gpus();
        r.intervals = std::move(st.intervals);
        const SimLearning& l = options_.learning;
        const int type = topo_.nodes()[static_cast<std::size_t>(node)].type;
        const std::string& gpu_type = static_cast<std::size_t>(type) < l.gpu_types.size()
                                          ? l.gpu_types[static_cast<std::size_t>(type)]
                                          : topo_.type_of(node).gpu.gpu_type;
        auto it = windows_.find(gpu_type);
        if (it == windows_.end()) it = windows_.emplace(gpu_type, model::ElapsedWindow(l.elapsed)).first;
        if (!it->second.add(std::move(r))) return;
        l.learner->learn_elapsed(it->second.runs(), it->second.options().fit, gpu_type);
        ++run_.refits;
    }

    // j started beside neighbours_: the judged model's error on it, when one shares a GPU with it.
    void note_model_error(int j, double now) {
        const bool paired = std::any_of(neighbours_.begin(), neighbours_.end(),
                                        [](const model::Neighbour& n) { return n.where == model::Sharing::Gpu; });
        if (!paired) return;
        const std::size_t i = static_cast<std::size_t>(j);
        const double model_speed =
            1.0 / std::max(1.0, options_.learning.judged->slowdown(*jobs_[i].profile, neighbours_));
        run_.model_error.push_back({now, started_, std::abs(model_speed - pace_[i].rate)});
    }

    void note_busy(double now) {
        run_.busy_gpu_seconds += busy_now_ * (now - busy_since_);
        busy_now_ = state_.busy_gpus();
        busy_since_ = now;
        BusyPoint p{now, state_.busy_gpus(), state_.used_slots_total(), shared_};
        if (!options_.record_busy) {
            run_.busy.assign(1, p);
            return;
        }
        if (!run_.busy.empty() && run_.busy.back().t == now) {
            run_.busy.back() = p;
            return;
        }
        const BusyPoint* last = run_.busy.empty() ? nullptr : &run_.busy.back();
        if (last && last->busy_gpus == p.busy_gpus && last->used_slots == p.used_slots &&
            last->shared_gpus == p.shared_gpus)
            return;  // no change: the last point still holds
        run_.busy.push_back(p);
    }

    const place::Topology& topo_;
    const place::Policy& policy_;
    place::Capacity units_;
    const model::InterferenceModel& truth_;
    const std::vector<ReplayJob>& jobs_;
    const SimOptions& options_;
    place::ClusterState state_;
    PolicyRun run_;
    HeldJobs turned_down_;

    EndHeap heap_;
    std::vector<double> finish_;  // predicted end of each running job
    // Each job's progress, side by side in memory: the sharing rule reads a held job's
    // neighbours' time left at every change near it.
    struct Pace {
        double remaining = 0;  // solo seconds of work left
        double rate = 1;       // progress per second (1 / slowdown)
        double last = 0;       // when remaining (and planned_left) was last brought up to date
        // With a planner: the time limit's solo seconds left and the pace the planner predicts.
        double planned_left = 0, planned_rate = 1;
    };
    std::vector<Pace> pace_;
    std::set<std::pair<double, int>> expected_;  // running jobs by start + time limit (Slurm's view)
    place::ExpectedEnds ends_;                   // the same by the end remaining_s() expects

    std::vector<int> queue_;
    std::vector<char> queued_;
    std::size_t head_ = 0;
    std::size_t queue_live_ = 0;
    std::int64_t queued_gpus_ = 0;  // GPUs the queued jobs ask for
    // The arrivals of the window and the queued jobs: the sharing rule's rates, the GPU-seconds queued,
    // and the nodes asked for (the engine's price of fragmentation).
    place::QueueDemand demand_;
    place::ExplorationBudget exploration_;
    double now_ = 0;  // the time of the events being handled
    // With pass_interval_s: the passes due (in time order), whether something happened since the
    // last one, whether the next must be a full pass, and the first job queued since the last.
    std::deque<double> passes_;
    std::deque<int> gated_;                      // submitted, waiting for admission's round (submission order)
    std::unordered_map<int, int> offered_node_;  // queued on a standing offer: its node
    std::size_t held_after_pass_ = 0;            // jobs left queued by the last pass
    std::size_t passed_upto_ = 0;                // queue_'s size then: jobs queued later are fresh
    std::unordered_map<int, int> claimed_;       // submitted(): idle GPUs the fresh jobs will take, per node
    bool pass_owed_ = false;
    bool pass_full_ = false;
    std::size_t pass_first_new_ = 0;
    double shadow_ = kInf;
    int extra_ = 0;
    int head_gpus_ = 0;              // the GPUs the reservation is for
    bool spares_idle_only_ = false;  // planned in idle GPUs while jobs take slots: extra_ counts idle GPUs
    bool ran_past_ = false;          // try_start behind the head: the job placed runs past the shadow,
    int taken_ = 0;                  // and took that many of the units the head spares (extra_)
    // Planned in idle GPUs: the busy GPUs the reservation counts on to be idle at its start.
    // A job that shares one past the shadow keeps it from the head as surely as one that takes
    // an idle GPU.
    std::vector<char> idle_by_shadow_;
    std::vector<std::size_t> freed_by_shadow_;
    std::vector<int> marked_nodes_;  // the nodes of freed_by_shadow_
    // Jobs behind the head that took more than it spares, with the judged model's settled version
    // and reservation_ then; reservation_ grows when the reservation changes (reserved_: its
    // head, planned shadow, spare and kind) or an end opens a slot on a GPU busy past the shadow.
    std::unordered_map<int, std::pair<std::uint64_t, std::uint64_t>> blocked_;
    std::uint64_t reservation_ = 0;
    std::tuple<int, double, int, bool> reserved_{-1, 0, 0, false};
    // may_fit_past_shadow(): per node, the GPUs with a free slot whose jobs run past the shadow,
    // and how many nodes have each count.
    std::vector<int> past_shadow_, nodes_by_past_;

    std::vector<int> gpu_base_;    // first flat GPU index of each node
    std::vector<int> released_;    // reserve(): slots given back per flat GPU
    std::vector<int> node_units_;  // reserve(): units per node, -1 = untouched
    std::vector<std::size_t> touched_gpus_;
    std::vector<int> touched_nodes_;

    double busy_now_ = 0, busy_since_ = 0;
    int shared_ = 0;  // GPUs holding two jobs or more

    std::vector<unsigned> stamp_;
    unsigned epoch_ = 0;
    std::vector<int> affected_;
    std::vector<int> ended_nodes_;  // end(): the nodes the job ran on
    std::vector<model::Neighbour> neighbours_;

    // Learning: per job, its stretch of unchanged neighbours now and the intervals it ran
    // through; the ended runs per GPU type; the report noise.
    struct Stretch {
        double since = 0;
        std::vector<model::Neighbour> neighbours;
        std::vector<model::RunInterval> intervals;
        unsigned serial = 0;  // counts the job's stretches: a report due in an ended one is stale
        int reported = 0;     // reports delivered in this stretch
    };
    std::vector<Stretch> stretch_;
    // The next report due per stretch with neighbours: (when, job, the stretch's serial).
    struct DueReport {
        double at;
        int job;
        unsigned serial;
        bool operator>(const DueReport& o) const { return at > o.at || (at == o.at && job > o.job); }
    };
    std::priority_queue<DueReport, std::vector<DueReport>, std::greater<>> due_reports_;
    std::map<std::string, model::ElapsedWindow> windows_;
    std::mt19937_64 rng_;
    std::size_t started_ = 0;  // jobs started so far
};

}  // namespace

PolicyRun simulate(const place::Topology& topology, const place::Policy& policy, place::Capacity units,
                   const model::InterferenceModel& truth, const std::vector<ReplayJob>& jobs,
                   const SimOptions& options) {
    for (std::size_t i = 1; i < jobs.size(); ++i)
        if (jobs[i].submit < jobs[i - 1].submit) throw std::invalid_argument("replay jobs must be in submission order");
    Sim sim(topology, policy, units, truth, jobs, options);
    return sim.run();
}

}  // namespace coloc::replay
