// Telling Slurm what node steering decided, through libslurm (slurm_load_node_single,
// slurm_update_node with Weight and AvailableFeatures/ActiveFeatures), without blocking colocd:
// a worker thread sends the updates, so that a slow slurmctld never delays a placement.
//
// The admin's own settings stay the admin's: before colocd first changes a node it reads the
// node's weight and features; it then sets weight = admin's + coloc's extra and features =
// admin's + coloc's (names starting with coloc_), and gives back exactly the admin's when steering
// is switched off or colocd stops cleanly. Before each later change it reads the node again, so
// that what an admin changed meanwhile (a weight colocd did not set, features) stays the admin's.
//
// Admission (daemon/steering/admission.hpp) sends its pending-job updates (BeginTime, node list)
// through the same queue; when colocd stops, the releases already queued are still sent.
//
// Elastic slots (daemon/steering/elastic_slots.hpp) go the same way: the node's gpuslot count is
// set by sending its whole Gres string with that count changed (Slurm drops a GRES an update
// leaves out). The admin's count, given back when elastic slots stop, is the larger of what the
// node had when colocd first changed it and its full count in colocd.yaml (a lowered count found
// at start is taken as left over from a colocd that did not stop cleanly); a count colocd did not
// set, found later, is the admin's from then on and caps what colocd opens.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <variant>
#include <vector>

#include "daemon/steering/admission.hpp"
#include "daemon/steering/elastic_slots.hpp"
#include "daemon/steering/steering.hpp"
#include "slurm/nodes.hpp"

namespace coloc::daemon {

// "a,coloc_x,b" -> "a,b": the admin's part of a feature list.
std::string admin_features(const std::string& list);
// The admin's list with coloc's features appended (each once).
std::string with_coloc_features(const std::string& admin, const std::vector<std::string>& coloc);

class SlurmNodeWriter {
public:
    SlurmNodeWriter();
    // Gives every node it changed back its admin's settings, then stops the worker.
    ~SlurmNodeWriter();
    SlurmNodeWriter(const SlurmNodeWriter&) = delete;
    SlurmNodeWriter& operator=(const SlurmNodeWriter&) = delete;

    // Queued; the worker applies them in order.
    void submit(std::vector<NodeUpdate> updates);
    void submit(std::vector<SlotUpdate> updates);
    void submit(std::vector<JobUpdate> updates);
    // Waits (up to `timeout_ms`) until everything submitted so far was sent; false on timeout.
    bool flush(int timeout_ms);

    struct Status {
        std::int64_t sent = 0;  // node updates Slurm accepted
        std::int64_t failed = 0;
        std::string last_error;                                 // empty when the last update went through
        std::map<std::string, slurm::SlurmNodeSettings> admin;  // what colocd gives back, per node
        std::map<std::string, int> admin_slots;                 // the gpuslot count given back, per node
        std::map<std::string, int> slots_set;                   // the gpuslot count colocd last set, per node
        std::int64_t jobs_sent = 0;                             // pending-job updates Slurm accepted (admission)
        std::int64_t jobs_failed = 0;                           // refused: mostly jobs that started meanwhile
    };
    Status status() const;

private:
    using Task = std::variant<NodeUpdate, SlotUpdate, JobUpdate>;
    void work();
    void apply(const NodeUpdate& u);
    void apply(const SlotUpdate& u);
    void apply(const JobUpdate& u);
    void failed(const std::string& why);  // under the lock

    mutable std::mutex mu_;
    std::condition_variable wake_, idle_;
    std::deque<Task> queue_;
    bool busy_ = false;
    bool stop_ = false;
    Status status_;
    std::map<std::string, slurm::SlurmNodeSettings> last_set_;  // what colocd last set, per node
    std::thread worker_;                                        // last: starts once the rest is ready
};

}  // namespace coloc::daemon
