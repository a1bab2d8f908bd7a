#include "place/cluster_state.hpp"

#include <algorithm>

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

ClusterState::ClusterState(const Topology& topo) : topo_(&topo) {
    const auto& nodes = topo.nodes();
    gpu_jobs_.resize(nodes.size());
    node_jobs_.resize(nodes.size());
    node_free_.resize(nodes.size());
    link_jobs_.resize(topo.link_names().size());
    for (const NodeType& t : topo.types()) max_gpus_ = std::max(max_gpus_, t.gpus);
    const int count = static_cast<int>(nodes.size());
    empty_.resize(topo.types().size());
    for (auto& e : empty_) e.resize(count);
    for (int kind = 0; kind < 2; ++kind) {
        cap_[kind].resize(nodes.size());
        buckets_[kind].resize(static_cast<std::size_t>(max_gpus_) + 1);
        for (auto& b : buckets_[kind]) b.resize(count);
    }
    for (std::size_t n = 0; n < nodes.size(); ++n) {
        const NodeType& t = topo.type_of(static_cast<int>(n));
        gpu_jobs_[n].resize(static_cast<std::size_t>(t.gpus));
        node_free_[n] = t.gpus * t.slots_per_gpu;
        for (int kind = 0; kind < 2; ++kind) {
            cap_[kind][n] = t.gpus;
            buckets_[kind][static_cast<std::size_t>(t.gpus)].insert(static_cast<int>(n));
        }
        empty_[static_cast<std::size_t>(nodes[n].type)].insert(static_cast<int>(n));
    }
}

void ClusterState::set_capacity(int node, Capacity kind, int value) {
    const int k = static_cast<int>(kind);
    int& now = cap_[k][static_cast<std::size_t>(node)];
    if (now == value) return;
    buckets_[k][static_cast<std::size_t>(now)].erase(node);
    buckets_[k][static_cast<std::size_t>(value)].insert(node);
    now = value;
}

void ClusterState::update_empty(int node) {
    NodeSet& e = empty_[static_cast<std::size_t>(topo_->nodes()[node].type)];
    if (node_jobs_[node].empty()) e.insert(node);
    else e.erase(node);
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

void ClusterState::occupy(JobId id, const Placement& p) {
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
    if (!contains(node_jobs_[p.node], id)) node_jobs_[p.node].push_back(id);
    update_empty(p.node);
    node_free_[p.node] -= static_cast<int>(p.gpus.size());
}

void ClusterState::release(JobId id, const Placement& p) {
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
    erase_one(node_jobs_[p.node], id);
    update_empty(p.node);
    node_free_[p.node] += static_cast<int>(p.gpus.size());
}

bool ClusterState::add(RunningJob job, bool enforce_slots) {
    if (!job.profile || jobs_.count(job.id)) return false;
    for (std::size_t i = 0; i < job.where.size(); ++i) {
        if (!fits(job.where[i], enforce_slots)) return false;
        for (std::size_t j = 0; j < i; ++j)
            if (job.where[j].node == job.where[i].node) return false;
    }
    for (const auto& p : job.where) occupy(job.id, p);
    if (job.multi_node())
        for (const auto& p : job.where) {
            int link = topo_->nodes()[p.node].link;
            if (link >= 0 && !contains(link_jobs_[link], job.id)) link_jobs_[link].push_back(job.id);
        }
    JobId id = job.id;
    jobs_.emplace(id, std::move(job));
    return true;
}

bool ClusterState::extend(JobId id, const Placement& more, bool enforce_slots) {
    auto it = jobs_.find(id);
    if (it == jobs_.end() || it->second.on_node(more.node) || !fits(more, enforce_slots)) return false;
    RunningJob& job = it->second;
    occupy(id, more);
    job.where.push_back(more);
    if (job.multi_node())
        for (const auto& p : job.where) {
            int link = topo_->nodes()[p.node].link;
            if (link >= 0 && !contains(link_jobs_[link], id)) link_jobs_[link].push_back(id);
        }
    return true;
}

bool ClusterState::remove(JobId id) {
    auto it = jobs_.find(id);
    if (it == jobs_.end()) return false;
    for (const auto& p : it->second.where) {
        release(id, p);
        int link = topo_->nodes()[p.node].link;
        if (link >= 0) erase_one(link_jobs_[link], id);
    }
    jobs_.erase(it);
    return true;
}

const RunningJob* ClusterState::find(JobId id) const {
    auto it = jobs_.find(id);
    return it == jobs_.end() ? nullptr : &it->second;
}

model::Sharing ClusterState::intra_node_sharing(const Placement& mine, const Placement& theirs) const {
    const NodeType& t = topo_->type_of(mine.node);
    model::Sharing best = model::Sharing::Node;
    for (int a : mine.gpus)
        for (int b : theirs.gpus) {
            if (a == b) return model::Sharing::Gpu;
            if (t.island[a] >= 0 && t.island[a] == t.island[b]) best = std::min(best, model::Sharing::Island);
            else if (t.pcie_switch[a] >= 0 && t.pcie_switch[a] == t.pcie_switch[b])
                best = std::min(best, model::Sharing::Switch);
        }
    return best;
}

void ClusterState::neighbours_at(std::span<const Placement> where, bool multi_node, JobId self,
                                 std::vector<model::Neighbour>& out) const {
    // Link neighbours are counted once per job even when it shares several links.
    thread_local std::vector<JobId> linked;
    linked.clear();
    for (const Placement& mine : where) {
        for (JobId other : node_jobs_[mine.node]) {
            if (other == self) continue;
            const RunningJob& them = jobs_.at(other);
            const Placement* theirs = them.on_node(mine.node);
            out.push_back({them.profile, intra_node_sharing(mine, *theirs), std::nullopt});
            if (multi_node && them.multi_node() && !contains(linked, other)) {
                // Both jobs' inter-node traffic leaves this node through its NICs.
                out.push_back({them.profile, model::Sharing::Link, std::nullopt});
                linked.push_back(other);
            }
        }
        int link = topo_->nodes()[mine.node].link;
        if (!multi_node || link < 0) continue;
        for (JobId other : link_jobs_[link]) {
            if (other == self || contains(linked, other)) continue;
            out.push_back({jobs_.at(other).profile, model::Sharing::Link, std::nullopt});
            linked.push_back(other);
        }
    }
}

void ClusterState::neighbours_of(const RunningJob& job, std::vector<model::Neighbour>& out) const {
    neighbours_at(job.where, job.multi_node(), job.id, out);
}

}  // namespace coloc::place
