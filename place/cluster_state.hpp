// Who runs where: the running jobs and, per GPU, node and link, the jobs that use it.
// Kept incrementally on every start and end, so a decision reads only the nodes it considers.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "model/model.hpp"
#include "place/job_index.hpp"
#include "place/topology.hpp"

namespace coloc::place {

using JobId = std::uint64_t;

struct Placement {
    int node = -1;
    std::vector<int> gpus;  // one slot on each
};

struct RunningJob {
    JobId id = 0;
    const model::JobProfile* profile = nullptr;  // owned by the caller (a catalogue); never null
    std::vector<Placement> where;
    double since = 0;

    bool multi_node() const { return where.size() > 1; }
    int gpu_count() const;
    const Placement* on_node(int node) const;
};

// Which of a job's GPUs on one node (`mine`, whose first is the job's `first`-th GPU) another
// job's GPUs on that node (`theirs`) include, as model::Neighbour::gpus bits (GPU 0 when none do).
std::uint64_t shared_gpus(std::span<const int> mine, int first, std::span<const int> theirs);
// How many of `job`'s GPUs come before its placement on `node` in its GPU list.
int gpus_before(const RunningJob& job, int node);

// A set of node indices as a bitset: O(1) insert/erase, ordered "next member after i" by word
// scans. The capacity indexes below keep one per capacity value.
class NodeSet {
public:
    void resize(int nodes) { words_.assign(static_cast<std::size_t>((nodes + 63) / 64), 0); }
    void insert(int n) {
        std::uint64_t& w = words_[static_cast<std::size_t>(n) >> 6];
        const std::uint64_t bit = std::uint64_t{1} << (n & 63);
        count_ += (w & bit) ? 0 : 1;
        w |= bit;
    }
    void erase(int n) {
        std::uint64_t& w = words_[static_cast<std::size_t>(n) >> 6];
        const std::uint64_t bit = std::uint64_t{1} << (n & 63);
        count_ -= (w & bit) ? 1 : 0;
        w &= ~bit;
    }
    bool contains(int n) const { return (words_[static_cast<std::size_t>(n) >> 6] >> (n & 63)) & 1; }
    int size() const { return count_; }
    // The lowest member > after, -1 when none.
    int next(int after) const;

private:
    std::vector<std::uint64_t> words_;
    int count_ = 0;
};

// What a node offers a job that takes one slot on each of k GPUs: Open = GPUs with a free slot
// (sharing allowed), Idle = GPUs no job uses (exclusive).
enum class Capacity { Open = 0, Idle = 1 };

class ClusterState {
public:
    explicit ClusterState(const Topology& topo);
    // A copy is a state of its own (its indexes point at its own jobs).
    ClusterState(const ClusterState& other);
    ClusterState& operator=(const ClusterState& other);
    ClusterState(ClusterState&&) noexcept = default;
    ClusterState& operator=(ClusterState&&) noexcept = default;

    const Topology& topology() const { return *topo_; }

    // Adds a running job; returns false and changes nothing if a GPU would exceed its slots
    // (unless `enforce_slots` is false: Slurm already bound the GPUs, as in narrow mode), a node
    // or GPU index is out of range, or the id is already running.
    bool add(RunningJob job, bool enforce_slots = true);
    // Adds slots of a job already running on another node (multi-node jobs placed node by node).
    bool extend(JobId id, const Placement& more, bool enforce_slots = true);
    bool remove(JobId id);

    const RunningJob* find(JobId id) const;
    std::size_t job_count() const { return jobs_.size(); }
    const std::unordered_map<JobId, RunningJob>& jobs() const { return jobs_; }

    int used_slots(int node, int gpu) const { return gpu_jobs_[node][gpu].size(); }
    int free_slots(int node, int gpu) const;
    int free_slots(int node) const { return node_free_[node]; }
    const std::vector<JobId>& jobs_on_gpu(int node, int gpu) const { return gpu_jobs_[node][gpu]; }
    const std::vector<JobId>& jobs_on_node(int node) const { return node_jobs_[node]; }
    // The same jobs, position for position, as the running jobs themselves.
    const std::vector<const RunningJob*>& running_on_node(int node) const { return node_job_ptrs_[node]; }
    const std::vector<JobId>& multi_node_jobs_on_link(int link) const { return link_jobs_[link]; }
    int busy_gpus() const { return busy_gpus_; }
    int used_slots_total() const { return used_slots_; }

    // Capacity indexes, kept on every start and end, so that a decision finds its candidate
    // nodes without scanning the cluster.
    int open_gpus(int node) const { return cap_[0][static_cast<std::size_t>(node)]; }
    int idle_gpus(int node) const { return cap_[1][static_cast<std::size_t>(node)]; }
    int capacity(Capacity kind, int node) const { return cap_[static_cast<int>(kind)][static_cast<std::size_t>(node)]; }
    int max_gpus_per_node() const { return max_gpus_; }
    // The nodes whose capacity of `kind` is exactly `value` (0..max_gpus_per_node()).
    const NodeSet& nodes_with(Capacity kind, int value) const {
        return buckets_[static_cast<int>(kind)][static_cast<std::size_t>(value)];
    }
    // How many nodes offer at least k GPUs of `kind`.
    int nodes_with_at_least(Capacity kind, int k) const;
    // The lowest-index node after `after` that offers at least k GPUs of `kind`; -1 when none.
    int next_node_with_at_least(Capacity kind, int k, int after = -1) const;
    // The nodes with exactly `value` free slots (0..max_slots_per_node()).
    const NodeSet& nodes_with_free_slots(int value) const { return free_buckets_[static_cast<std::size_t>(value)]; }
    int max_slots_per_node() const { return max_slots_; }
    // Change stamps, so that what was worked out from a job's neighbours can be kept until they
    // change: every start or end stamps the nodes (and, for multi-node jobs, the links) it
    // touches with a number that only grows. instance() tells states apart.
    std::uint64_t instance() const { return instance_; }
    std::uint64_t changes() const { return changes_; }
    // The latest stamp on the nodes of `job` (and its links when it is multi-node): its
    // neighbours have not changed since then.
    std::uint64_t last_change(const RunningJob& job) const;
    // The latest stamp on one node, or on one link.
    std::uint64_t node_change(int node) const { return node_stamp_[static_cast<std::size_t>(node)]; }
    std::uint64_t link_change(int link) const { return link_stamp_[static_cast<std::size_t>(link)]; }
    // Nodes that run no job, per node type (all of one type score alike for a new job).
    const NodeSet& empty_nodes(int type) const { return empty_[static_cast<std::size_t>(type)]; }

    // The neighbours a job would have at `where` (excluding `self`), each at its tightest
    // intra-node level (at Gpu with the job's GPUs it shares, counted along `where`), plus a
    // Link entry when both jobs send inter-node traffic over a shared NIC or leaf link.
    // Appends to `out`.
    void neighbours_at(std::span<const Placement> where, bool multi_node, JobId self,
                       std::vector<model::Neighbour>& out) const;
    // The neighbours of a running job as it is now.
    void neighbours_of(const RunningJob& job, std::vector<model::Neighbour>& out) const;
    // The tightest level two placements on the same node share.
    model::Sharing intra_node_sharing(const Placement& mine, const Placement& theirs) const;

private:
    bool fits(const Placement& p, bool enforce_slots) const;
    void occupy(const RunningJob* job, const Placement& p);
    void repoint();
    void join_link(const RunningJob* job, int node);
    void release(JobId id, const Placement& p);
    void set_capacity(int node, Capacity kind, int value);
    void update_empty(int node);
    void set_free(int node, int value);

    const Topology* topo_;
    std::unordered_map<JobId, RunningJob> jobs_;
    JobIndex index_;                                         // the same jobs, for find()
    std::vector<std::vector<std::vector<JobId>>> gpu_jobs_;  // [node][gpu] -> jobs
    std::vector<std::vector<JobId>> node_jobs_;              // [node] -> jobs (each once)
    std::vector<std::vector<JobId>> link_jobs_;              // [link] -> multi-node jobs
    std::vector<int> node_free_;                             // free slots per node
    int busy_gpus_ = 0;
    int used_slots_ = 0;
    int max_gpus_ = 0;
    std::vector<int> cap_[2];          // [kind][node] -> open / idle GPUs
    std::vector<NodeSet> buckets_[2];  // [kind][value] -> nodes
    std::vector<NodeSet> empty_;       // [type] -> nodes without jobs
    int max_slots_ = 0;
    std::vector<NodeSet> free_buckets_;  // [free slots] -> nodes
    // The same jobs as node_jobs_ / link_jobs_, position for position, as pointers into jobs_.
    std::vector<std::vector<const RunningJob*>> node_job_ptrs_;
    std::vector<std::vector<const RunningJob*>> link_job_ptrs_;
    std::uint64_t instance_ = 0;
    std::uint64_t changes_ = 0;
    std::vector<std::uint64_t> node_stamp_, link_stamp_;
};

}  // namespace coloc::place
