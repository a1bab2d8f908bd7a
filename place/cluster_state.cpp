#include "place/cluster_state.hpp"

#include <algorithm>
#include <atomic>

namespace coloc::place {

namespace {

void erase_one(std::vector<JobId>& v, JobId id) {
    auto it = std::find(v.begin(), v.end(), id);
    if (it != v.end()) {
        *it = v.back();
        v.pop_back();
    }
}

bool contains(const std::vector<JobId>& v, JobId id) { return std::find(v.begin(), v.end(), id) != v.end(); }

// Removes `id` from `ids` and the pointer at the same position from `ptrs` (kept in step).
void erase_pair(std::vector<JobId>& ids, std::vector<const RunningJob*>& ptrs, JobId id) {
    auto it = std::find(ids.begin(), ids.end(), id);
    if (it == ids.end()) return;
    const std::size_t at = static_cast<std::size_t>(it - ids.begin());
    ids[at] = ids.back();
    ids.pop_back();
    ptrs[at] = ptrs.back();
    ptrs.pop_back();
}

std::atomic<std::uint64_t> next_instance{1};

}  // namespace

int NodeSet::next(int after) const {
    int from = after + 1;
    if (from < 0) from = 0;
    std::size_t w = static_cast<std::size_t>(from) >> 6;
    if (w >= words_.size()) return -1;
    std::uint64_t bits = words_[w] & (~std::uint64_t{0} << (from & 63));
    while (true) {
        if (bits) return static_cast<int>(w * 64 + static_cast<std::size_t>(__builtin_ctzll(bits)));
        if (++w >= words_.size()) return -1;
        bits = words_[w];
    }
}

int RunningJob::gpu_count() const {
    int n = 0;
    for (const auto& p : where) n += static_cast<int>(p.gpus.size());
    return n;
}

const Placement* RunningJob::on_node(int node) const {
    for (const auto& p : where)
        if (p.node == node) return &p;
    return nullptr;
}

ClusterState::ClusterState(const Topology& topo) : topo_(&topo), instance_(next_instance++) {
    const auto& nodes = topo.nodes();
    gpu_jobs_.resize(nodes.size());
    node_jobs_.resize(nodes.size());
    node_job_ptrs_.resize(nodes.size());
    node_free_.resize(nodes.size());
    node_stamp_.assign(nodes.size(), 0);
    link_jobs_.resize(topo.link_names().size());
    link_job_ptrs_.resize(topo.link_names().size());
    link_stamp_.assign(topo.link_names().size(), 0);
    for (const NodeType& t : topo.types()) {
        max_gpus_ = std::max(max_gpus_, t.gpus);
        max_slots_ = std::max(max_slots_, t.gpus * t.slots_per_gpu);
    }
    const int count = static_cast<int>(nodes.size());
    empty_.resize(topo.types().size());
    for (auto& e : empty_) e.resize(count);
    for (int kind = 0; kind < 2; ++kind) {
        cap_[kind].resize(nodes.size());
        buckets_[kind].resize(static_cast<std::size_t>(max_gpus_) + 1);
        for (auto& b : buckets_[kind]) b.resize(count);
    }
    free_buckets_.resize(static_cast<std::size_t>(max_slots_) + 1);
    for (auto& b : free_buckets_) b.resize(count);
    for (std::size_t n = 0; n < nodes.size(); ++n) {
        const NodeType& t = topo.type_of(static_cast<int>(n));
        gpu_jobs_[n].resize(static_cast<std::size_t>(t.gpus));
        node_free_[n] = t.gpus * t.slots_per_gpu;
        free_buckets_[static_cast<std::size_t>(node_free_[n])].insert(static_cast<int>(n));
        for (int kind = 0; kind < 2; ++kind) {
            cap_[kind][n] = t.gpus;
            buckets_[kind][static_cast<std::size_t>(t.gpus)].insert(static_cast<int>(n));
        }
        empty_[static_cast<std::size_t>(nodes[n].type)].insert(static_cast<int>(n));
    }
}

ClusterState::ClusterState(const ClusterState& other)
    : topo_(other.topo_),
      jobs_(other.jobs_),
      gpu_jobs_(other.gpu_jobs_),
      node_jobs_(other.node_jobs_),
      link_jobs_(other.link_jobs_),
      node_free_(other.node_free_),
      busy_gpus_(other.busy_gpus_),
      used_slots_(other.used_slots_),
      max_gpus_(other.max_gpus_),
      cap_{other.cap_[0], other.cap_[1]},
      buckets_{other.buckets_[0], other.buckets_[1]},
      empty_(other.empty_),
      max_slots_(other.max_slots_),
      free_buckets_(other.free_buckets_),
      instance_(next_instance++),
      changes_(other.changes_),
      node_stamp_(other.node_stamp_),
      link_stamp_(other.link_stamp_) {
    repoint();
}

ClusterState& ClusterState::operator=(const ClusterState& other) {
    if (this != &other) {
        ClusterState copy(other);
        *this = std::move(copy);
    }
    return *this;
}

void ClusterState::repoint() {
    index_.clear();
    for (const auto& [id, job] : jobs_) index_.insert(id, &job);
    node_job_ptrs_.assign(node_jobs_.size(), {});
    for (std::size_t n = 0; n < node_jobs_.size(); ++n)
        for (JobId id : node_jobs_[n]) node_job_ptrs_[n].push_back(&jobs_.at(id));
    link_job_ptrs_.assign(link_jobs_.size(), {});
    for (std::size_t l = 0; l < link_jobs_.size(); ++l)
        for (JobId id : link_jobs_[l]) link_job_ptrs_[l].push_back(&jobs_.at(id));
}

void ClusterState::set_capacity(int node, Capacity kind, int value) {
    const int k = static_cast<int>(kind);
    int& now = cap_[k][static_cast<std::size_t>(node)];
    if (now == value) return;
    buckets_[k][static_cast<std::size_t>(now)].erase(node);
    buckets_[k][static_cast<std::size_t>(value)].insert(node);
    now = value;
}

void ClusterState::set_free(int node, int value) {
    // A node can go below zero free slots when Slurm bound the GPUs (enforce_slots = false): it
    // is then bucketed with the full ones.
    int& now = node_free_[static_cast<std::size_t>(node)];
    free_buckets_[static_cast<std::size_t>(std::max(now, 0))].erase(node);
    free_buckets_[static_cast<std::size_t>(std::max(value, 0))].insert(node);
    now = value;
}

void ClusterState::update_empty(int node) {
    NodeSet& e = empty_[static_cast<std::size_t>(topo_->nodes()[node].type)];
    if (node_jobs_[node].empty())
        e.insert(node);
    else
        e.erase(node);
}

int ClusterState::nodes_with_at_least(Capacity kind, int k) const {
    const auto& b = buckets_[static_cast<int>(kind)];
    int n = 0;
    for (int v = std::max(k, 0); v <= max_gpus_; ++v) n += b[static_cast<std::size_t>(v)].size();
    return n;
}

int ClusterState::next_node_with_at_least(Capacity kind, int k, int after) const {
    const auto& b = buckets_[static_cast<int>(kind)];
    int best = -1;
    for (int v = std::max(k, 0); v <= max_gpus_; ++v) {
        int n = b[static_cast<std::size_t>(v)].next(after);
        if (n >= 0 && (best < 0 || n < best)) best = n;
    }
    return best;
}

int ClusterState::free_slots(int node, int gpu) const {
    return topo_->type_of(node).slots_per_gpu - static_cast<int>(gpu_jobs_[node][gpu].size());
}

bool ClusterState::fits(const Placement& p, bool enforce_slots) const {
    if (p.node < 0 || p.node >= static_cast<int>(gpu_jobs_.size())) return false;
    const int gpus = static_cast<int>(gpu_jobs_[p.node].size());
    for (std::size_t i = 0; i < p.gpus.size(); ++i) {
        int g = p.gpus[i];
        if (g < 0 || g >= gpus || (enforce_slots && free_slots(p.node, g) < 1)) return false;
        for (std::size_t j = 0; j < i; ++j)
            if (p.gpus[j] == g) return false;  // one slot per GPU per job
    }
    return true;
}

void ClusterState::occupy(const RunningJob* job, const Placement& p) {
    const JobId id = job->id;
    node_stamp_[static_cast<std::size_t>(p.node)] = ++changes_;
    const int slots = topo_->type_of(p.node).slots_per_gpu;
    int open = open_gpus(p.node), idle = idle_gpus(p.node);
    for (int g : p.gpus) {
        auto& on = gpu_jobs_[p.node][g];
        if (on.empty()) {
            ++busy_gpus_;
            --idle;
        }
        on.push_back(id);
        if (static_cast<int>(on.size()) == slots) --open;
    }
    used_slots_ += static_cast<int>(p.gpus.size());
    set_capacity(p.node, Capacity::Open, open);
    set_capacity(p.node, Capacity::Idle, idle);
    if (!contains(node_jobs_[p.node], id)) {
        node_jobs_[p.node].push_back(id);
        node_job_ptrs_[p.node].push_back(job);
    }
    update_empty(p.node);
    set_free(p.node, node_free_[p.node] - static_cast<int>(p.gpus.size()));
}

void ClusterState::release(JobId id, const Placement& p) {
    node_stamp_[static_cast<std::size_t>(p.node)] = ++changes_;
    const int slots = topo_->type_of(p.node).slots_per_gpu;
    int open = open_gpus(p.node), idle = idle_gpus(p.node);
    for (int g : p.gpus) {
        auto& on = gpu_jobs_[p.node][g];
        if (static_cast<int>(on.size()) == slots) ++open;
        erase_one(on, id);
        if (on.empty()) {
            --busy_gpus_;
            ++idle;
        }
    }
    used_slots_ -= static_cast<int>(p.gpus.size());
    set_capacity(p.node, Capacity::Open, open);
    set_capacity(p.node, Capacity::Idle, idle);
    erase_pair(node_jobs_[p.node], node_job_ptrs_[p.node], id);
    update_empty(p.node);
    set_free(p.node, node_free_[p.node] + static_cast<int>(p.gpus.size()));
}

bool ClusterState::add(RunningJob job, bool enforce_slots) {
    if (!job.profile || jobs_.count(job.id)) return false;
    for (std::size_t i = 0; i < job.where.size(); ++i) {
        if (!fits(job.where[i], enforce_slots)) return false;
        for (std::size_t j = 0; j < i; ++j)
            if (job.where[j].node == job.where[i].node) return false;
    }
    // Stored first: the indexes point at it (node-based map: the address stays put).
    const RunningJob* stored = &jobs_.emplace(job.id, std::move(job)).first->second;
    index_.insert(stored->id, stored);
    for (const auto& p : stored->where) occupy(stored, p);
    if (stored->multi_node())
        for (const auto& p : stored->where) join_link(stored, p.node);
    return true;
}

bool ClusterState::extend(JobId id, const Placement& more, bool enforce_slots) {
    auto it = jobs_.find(id);
    if (it == jobs_.end() || it->second.on_node(more.node) || !fits(more, enforce_slots)) return false;
    RunningJob& job = it->second;
    occupy(&job, more);
    job.where.push_back(more);
    if (job.multi_node())
        for (const auto& p : job.where) join_link(&job, p.node);
    return true;
}

bool ClusterState::remove(JobId id) {
    auto it = jobs_.find(id);
    if (it == jobs_.end()) return false;
    for (const auto& p : it->second.where) {
        release(id, p);
        int link = topo_->nodes()[p.node].link;
        if (link >= 0 && contains(link_jobs_[link], id)) {
            erase_pair(link_jobs_[link], link_job_ptrs_[link], id);
            link_stamp_[static_cast<std::size_t>(link)] = ++changes_;
        }
    }
    index_.erase(id);
    jobs_.erase(it);
    return true;
}

void ClusterState::join_link(const RunningJob* job, int node) {
    const int link = topo_->nodes()[node].link;
    if (link < 0 || contains(link_jobs_[link], job->id)) return;
    link_jobs_[link].push_back(job->id);
    link_job_ptrs_[link].push_back(job);
    link_stamp_[static_cast<std::size_t>(link)] = ++changes_;
}

std::uint64_t ClusterState::last_change(const RunningJob& job) const {
    std::uint64_t last = 0;
    for (const Placement& p : job.where) {
        last = std::max(last, node_stamp_[static_cast<std::size_t>(p.node)]);
        const int link = topo_->nodes()[p.node].link;
        if (job.multi_node() && link >= 0) last = std::max(last, link_stamp_[static_cast<std::size_t>(link)]);
    }
    return last;
}

const RunningJob* ClusterState::find(JobId id) const { return index_.find(id); }

std::uint64_t shared_gpus(std::span<const int> mine, int first, std::span<const int> theirs) {
    std::uint64_t bits = 0;
    for (std::size_t i = 0; i < mine.size(); ++i)
        if (std::find(theirs.begin(), theirs.end(), mine[i]) != theirs.end())
            bits |= model::gpu_bit(first + static_cast<int>(i));
    return bits ? bits : 1;
}

int gpus_before(const RunningJob& job, int node) {
    int n = 0;
    for (const Placement& p : job.where) {
        if (p.node == node) return n;
        n += static_cast<int>(p.gpus.size());
    }
    return n;
}

model::Sharing ClusterState::intra_node_sharing(const Placement& mine, const Placement& theirs) const {
    const NodeType& t = topo_->type_of(mine.node);
    if (!t.island_peers.empty()) {  // GPU sets as bits (a decision asks this very often)
        std::uint64_t a = 0, island = 0, pcie = 0, b = 0;
        for (int g : mine.gpus) {
            a |= std::uint64_t{1} << g;
            island |= t.island_peers[static_cast<std::size_t>(g)];
            pcie |= t.switch_peers[static_cast<std::size_t>(g)];
        }
        for (int g : theirs.gpus) b |= std::uint64_t{1} << g;
        if (a & b) return model::Sharing::Gpu;
        if (island & b) return model::Sharing::Island;
        if (pcie & b) return model::Sharing::Switch;
        return model::Sharing::Node;
    }
    model::Sharing best = model::Sharing::Node;
    for (int a : mine.gpus)
        for (int b : theirs.gpus) {
            if (a == b) return model::Sharing::Gpu;
            if (t.island[a] >= 0 && t.island[a] == t.island[b])
                best = std::min(best, model::Sharing::Island);
            else if (t.pcie_switch[a] >= 0 && t.pcie_switch[a] == t.pcie_switch[b])
                best = std::min(best, model::Sharing::Switch);
        }
    return best;
}

void ClusterState::neighbours_at(std::span<const Placement> where, bool multi_node, JobId self,
                                 std::vector<model::Neighbour>& out) const {
    // The links the job's nodes hang off, each once.
    thread_local std::vector<int> links;
    links.clear();
    if (multi_node)
        for (const Placement& mine : where) {
            const int link = topo_->nodes()[mine.node].link;
            if (link >= 0 && std::find(links.begin(), links.end(), link) == links.end()) links.push_back(link);
        }
    // Multi-node neighbours on nodes without a known link (each once).
    thread_local std::vector<const RunningJob*> unlinked;
    unlinked.clear();
    int first = 0;  // the job's GPUs on the placements before this one
    for (const Placement& mine : where) {
        const bool has_link = topo_->nodes()[mine.node].link >= 0;
        for (const RunningJob* them : node_job_ptrs_[mine.node]) {
            if (them->id == self) continue;
            const Placement* theirs = them->on_node(mine.node);
            const model::Sharing level = intra_node_sharing(mine, *theirs);
            out.push_back({them->profile, level, std::nullopt,
                           level == model::Sharing::Gpu ? shared_gpus(mine.gpus, first, theirs->gpus) : 1,
                           topo_->hardware_of(mine.node)});
            // Both jobs' inter-node traffic leaves this node through its NICs. A multi-node job
            // on a node with a link is on that link's list too, and counted there.
            if (multi_node && them->multi_node() && !has_link &&
                std::find(unlinked.begin(), unlinked.end(), them) == unlinked.end())
                unlinked.push_back(them);
        }
        first += static_cast<int>(mine.gpus.size());
    }
    for (const RunningJob* them : unlinked) out.push_back({them->profile, model::Sharing::Link, std::nullopt});
    // Link neighbours, once per job even when it shares several links with this one: a job on
    // an earlier link of the list was counted there.
    for (std::size_t i = 0; i < links.size(); ++i)
        for (const RunningJob* them : link_job_ptrs_[static_cast<std::size_t>(links[i])]) {
            if (them->id == self) continue;
            bool counted = false;
            if (i > 0)
                for (const Placement& p : them->where) {
                    const int l = topo_->nodes()[p.node].link;
                    if (std::find(links.begin(), links.begin() + static_cast<long>(i), l) !=
                        links.begin() + static_cast<long>(i)) {
                        counted = true;
                        break;
                    }
                }
            if (!counted && std::find(unlinked.begin(), unlinked.end(), them) == unlinked.end())
                out.push_back({them->profile, model::Sharing::Link, std::nullopt});
        }
}

void ClusterState::neighbours_of(const RunningJob& job, std::vector<model::Neighbour>& out) const {
    neighbours_at(job.where, job.multi_node(), job.id, out);
}

}  // namespace coloc::place
