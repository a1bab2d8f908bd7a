// When colocd reads its nodes from Slurm: the first read at start (slurmctld may start after
// colocd, so it retries in rounds until slurmctld answers) and a watch that rereads the layout
// every so often and says when it changed, so that colocd serves the new one.
#pragma once

#include <atomic>
#include <memory>
#include <string>

#include "config/config.hpp"
#include "config/slurm_layout.hpp"

namespace coloc::daemon {

// One read: slurmctld's nodes and partitions, gres.conf and topology.conf, merged with
// colocd.yaml (merge_layout). Throws std::runtime_error when Slurm cannot be asked.
MergedLayout read_slurm_layout(const Config& yaml);

// `yaml` with its topology replaced by Slurm's, read in rounds `retry_s` apart until slurmctld
// answers; logs each new failure once and the notes of the answer. False when `stop` came first.
bool wait_for_slurm_layout(Config& cfg, const std::atomic<bool>& stop, int retry_s);

// What identifies a layout: node names, their GPUs, slots, islands and links.
std::string layout_fingerprint(const place::Topology& topo);

// Rereads the layout every `interval_s` on its own thread (libslurm may take slurmctld's
// MessageTimeout) and sets `changed` once it differs from `current`.
class LayoutWatch {
public:
    LayoutWatch(const Config& yaml, const place::Topology& current, int interval_s, std::atomic<bool>& changed);
    ~LayoutWatch();  // stops asking; a read under way finishes on its own
    LayoutWatch(const LayoutWatch&) = delete;
    LayoutWatch& operator=(const LayoutWatch&) = delete;

private:
    struct Shared;
    std::shared_ptr<Shared> shared_;
};

}  // namespace coloc::daemon
