#include "daemon/steering/node_writer.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <ctime>
#include <sstream>
#include <stdexcept>

#include "daemon/log.hpp"
#include "slurm/pending_jobs.hpp"

namespace coloc::daemon {

using slurm::node_gres_count;
using slurm::update_slurm_node_gres;
using slurm::with_node_gres_count;

namespace {

std::vector<std::string> split(const std::string& list) {
    std::vector<std::string> out;
    std::stringstream in(list);
    std::string item;
    while (std::getline(in, item, ','))
        if (!item.empty()) out.push_back(item);
    return out;
}

bool is_coloc_feature(const std::string& f) { return f.rfind(kSteeringFeaturePrefix, 0) == 0; }

}  // namespace

std::string admin_features(const std::string& list) {
    std::string out;
    for (const std::string& f : split(list))
        if (!is_coloc_feature(f)) out += (out.empty() ? "" : ",") + f;
    return out;
}

std::string with_coloc_features(const std::string& admin, const std::vector<std::string>& coloc) {
    std::vector<std::string> all = split(admin_features(admin));
    for (const std::string& f : coloc)
        if (std::find(all.begin(), all.end(), f) == all.end()) all.push_back(f);
    std::string out;
    for (const std::string& f : all) out += (out.empty() ? "" : ",") + f;
    return out;
}

SlurmNodeWriter::SlurmNodeWriter() : worker_([this] { work(); }) {}

SlurmNodeWriter::~SlurmNodeWriter() {
    {
        // What is still queued is dropped: every node changed or about to be gets its own back.
        std::lock_guard lock(mu_);
        std::vector<std::string> nodes;
        std::map<std::string, int> slot_nodes;  // node -> its full count
        for (const auto& [node, _] : status_.admin) nodes.push_back(node);
        for (const auto& [node, _] : status_.admin_slots) slot_nodes.emplace(node, 0);
        std::vector<JobUpdate> releases;  // a held job's lease renewal is dropped; its release is not
        const auto now = static_cast<std::int64_t>(std::time(nullptr));
        for (const Task& t : queue_) {
            if (const auto* j = std::get_if<JobUpdate>(&t)) {
                if (j->begin <= now) releases.push_back(*j);
            } else if (const auto* u = std::get_if<NodeUpdate>(&t)) {
                if (std::find(nodes.begin(), nodes.end(), u->node) == nodes.end()) nodes.push_back(u->node);
            } else if (const auto* s = std::get_if<SlotUpdate>(&t)) {
                slot_nodes[s->node] = std::max(slot_nodes[s->node], s->full);
            }
        }
        queue_.clear();
        for (const JobUpdate& j : releases) queue_.push_back(j);
        for (const std::string& node : nodes) queue_.push_back(NodeUpdate{node, std::nullopt});
        for (const auto& [node, full] : slot_nodes) queue_.push_back(SlotUpdate{node, std::nullopt, full});
        stop_ = true;
    }
    wake_.notify_all();
    worker_.join();
}

void SlurmNodeWriter::submit(std::vector<NodeUpdate> updates) {
    if (updates.empty()) return;
    {
        std::lock_guard lock(mu_);
        for (auto& u : updates) queue_.push_back(std::move(u));
    }
    wake_.notify_all();
}

void SlurmNodeWriter::submit(std::vector<SlotUpdate> updates) {
    if (updates.empty()) return;
    {
        std::lock_guard lock(mu_);
        for (auto& u : updates) queue_.push_back(std::move(u));
    }
    wake_.notify_all();
}

void SlurmNodeWriter::submit(std::vector<JobUpdate> updates) {
    if (updates.empty()) return;
    {
        std::lock_guard lock(mu_);
        for (auto& u : updates) queue_.push_back(std::move(u));
    }
    wake_.notify_all();
}

bool SlurmNodeWriter::flush(int timeout_ms) {
    std::unique_lock lock(mu_);
    return idle_.wait_for(lock, std::chrono::milliseconds(timeout_ms), [&] { return queue_.empty() && !busy_; });
}

SlurmNodeWriter::Status SlurmNodeWriter::status() const {
    std::lock_guard lock(mu_);
    return status_;
}

void SlurmNodeWriter::work() {
    std::unique_lock lock(mu_);
    while (true) {
        wake_.wait(lock, [&] { return stop_ || !queue_.empty(); });
        if (queue_.empty()) break;  // stopping, and everything given back
        Task t = std::move(queue_.front());
        queue_.pop_front();
        busy_ = true;
        lock.unlock();
        std::visit([this](const auto& u) { apply(u); }, t);
        lock.lock();
        busy_ = false;
        if (queue_.empty()) idle_.notify_all();
    }
    idle_.notify_all();
}

// Runs on the worker thread; status_ under the lock.
void SlurmNodeWriter::apply(const NodeUpdate& u) {
    std::optional<slurm::SlurmNodeSettings> admin;
    {
        std::lock_guard lock(mu_);
        if (auto it = status_.admin.find(u.node); it != status_.admin.end()) admin = it->second;
    }
    std::string why;
    if (admin) {
        // The admin may have changed the node while colocd steered it (scontrol update): a
        // weight other than the one colocd last set, and every feature not named coloc_*, are
        // the admin's now, kept while steering and given back when it stops.
        slurm::SlurmNodeSettings now;
        if (load_slurm_node(u.node, now, why)) {
            std::lock_guard lock(mu_);
            slurm::SlurmNodeSettings& known = status_.admin[u.node];
            if (auto last = last_set_.find(u.node); last != last_set_.end() && now.weight != last->second.weight) {
                log_info("steering: " + u.node + "'s Weight was set to " + std::to_string(now.weight) +
                         " by someone else; it is the admin's weight from now on");
                known.weight = now.weight;
            }
            known.features = admin_features(now.features);
            known.active_features = admin_features(now.active_features);
            admin = known;
        }
        why.clear();
    } else {
        if (!u.advice) return;  // never changed: nothing to give back
        slurm::SlurmNodeSettings now;
        if (!load_slurm_node(u.node, now, why)) {
            std::lock_guard lock(mu_);
            ++status_.failed;
            status_.last_error = why;
            log_error(why);
            return;
        }
        // Features named coloc_* are colocd's, left over from a colocd that did not stop cleanly.
        now.features = admin_features(now.features);
        now.active_features = admin_features(now.active_features);
        admin = now;
        std::lock_guard lock(mu_);
        status_.admin.emplace(u.node, now);
    }
    slurm::SlurmNodeSettings want = *admin;
    if (u.advice) {
        want.weight = admin->weight + static_cast<std::uint32_t>(u.advice->extra_weight);
        want.features = with_coloc_features(admin->features, u.advice->features);
        want.active_features = with_coloc_features(admin->active_features, u.advice->features);
    }
    const bool ok = update_slurm_node(u.node, want, why);
    std::lock_guard lock(mu_);
    if (!ok) {
        ++status_.failed;
        status_.last_error = why;
        log_error(why);
        return;
    }
    ++status_.sent;
    status_.last_error.clear();
    last_set_[u.node] = want;
    if (!u.advice) {  // given back
        status_.admin.erase(u.node);
        last_set_.erase(u.node);
    }
    log_debug("steering: " + u.node + " Weight=" + std::to_string(want.weight) + " Features=" + want.features);
}

void SlurmNodeWriter::failed(const std::string& why) {
    ++status_.failed;
    status_.last_error = why;
    log_error(why);
}

// Runs on the worker thread; status_ under the lock.
void SlurmNodeWriter::apply(const SlotUpdate& u) {
    static const std::string kSlot = "gpuslot";
    std::optional<int> admin, last;
    {
        std::lock_guard lock(mu_);
        if (auto it = status_.admin_slots.find(u.node); it != status_.admin_slots.end()) admin = it->second;
        if (auto it = status_.slots_set.find(u.node); it != status_.slots_set.end()) last = it->second;
    }
    if (!admin && !u.slots) return;  // never changed: nothing to give back
    std::string why;
    slurm::SlurmNodeSettings now;
    if (!load_slurm_node(u.node, now, why)) {
        std::lock_guard lock(mu_);
        return failed(why);
    }
    const int count = node_gres_count(now.gres, kSlot);
    if (count < 0) {
        std::lock_guard lock(mu_);
        return failed("elastic slots: node " + u.node + " has no " + kSlot + " in its Gres (" + now.gres + ")");
    }
    if (!admin) {
        admin = std::max(count, u.full);
    } else if (last && count != *last) {
        log_info("elastic slots: " + u.node + "'s " + kSlot + " count was set to " + std::to_string(count) +
                 " by someone else; it is the admin's count from now on");
        admin = count;
    }
    {
        std::lock_guard lock(mu_);
        status_.admin_slots[u.node] = *admin;
    }
    const int want = u.slots ? std::min(*u.slots, *admin) : *admin;
    const bool ok = want == count || update_slurm_node_gres(u.node, with_node_gres_count(now.gres, kSlot, want), why);
    std::lock_guard lock(mu_);
    if (!ok) return failed(why);
    if (want != count) ++status_.sent;
    status_.last_error.clear();
    status_.slots_set[u.node] = want;
    if (!u.slots) {  // given back
        status_.admin_slots.erase(u.node);
        status_.slots_set.erase(u.node);
    }
    log_debug("elastic slots: " + u.node + " " + kSlot + "=" + std::to_string(want));
}

}  // namespace coloc::daemon

namespace coloc::daemon {

// Runs on the worker thread; status_ under the lock. A job that started, ended or was
// cancelled since the round is refused: counted, logged at debug level only.
void SlurmNodeWriter::apply(const JobUpdate& u) {
    std::string why;
    bool ok = slurm::update_pending_job(u.job, u.begin, u.nodes, why);
    // A node list Slurm refuses (say, a node outside the job's partition) must not keep a
    // release from the job: released without it, Slurm picks the node.
    if (!ok && u.nodes && !u.nodes->empty()) ok = slurm::update_pending_job(u.job, u.begin, std::nullopt, why);
    std::lock_guard lock(mu_);
    if (!ok) {
        // Mostly a job that started meanwhile; a refusal of every update (no Operator rights)
        // shows in the first and in the count.
        if (status_.jobs_failed++ % 1000 == 0)
            log_error("admission: " + why + " (refusals so far: " + std::to_string(status_.jobs_failed) + ")");
        else
            log_debug("admission: " + why);
        return;
    }
    ++status_.jobs_sent;
    log_debug("admission: job " + std::to_string(u.job) + " BeginTime=" + std::to_string(u.begin) +
              (u.nodes ? " NodeList=" + *u.nodes : ""));
}

}  // namespace coloc::daemon
