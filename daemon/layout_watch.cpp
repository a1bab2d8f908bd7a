#include "daemon/layout_watch.hpp"

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "daemon/log.hpp"

namespace coloc::daemon {

MergedLayout read_slurm_layout(const Config& yaml) {
    const slurm::SlurmLayout slurm = slurm::load_slurm_layout();
    std::vector<std::string> names;
    for (const auto& n : slurm.nodes) names.push_back(n.name);
    try {
        return merge_layout(yaml, slurm, read_layout_files(slurm_conf_path(), names));
    } catch (const slurm::ConfError& e) {
        throw std::runtime_error(e.what());
    } catch (const std::invalid_argument& e) {
        throw std::runtime_error(e.what());
    }
}

bool wait_for_slurm_layout(Config& cfg, const std::atomic<bool>& stop, int retry_s) {
    std::string last_error;
    while (!stop.load()) {
        try {
            MergedLayout layout = read_slurm_layout(cfg);
            for (const std::string& note : layout.notes) log_info("Slurm's layout: " + note);
            cfg.topology = std::move(layout.topology);
            log_info("read " + std::to_string(cfg.topology.nodes().size()) + " nodes (" +
                     std::to_string(cfg.topology.total_gpus()) + " GPUs) from Slurm");
            return true;
        } catch (const std::exception& e) {
            if (e.what() != last_error) log_error(std::string("waiting for slurmctld: ") + e.what());
            last_error = e.what();
        }
        for (int waited_ms = 0; waited_ms < retry_s * 1000 && !stop.load(); waited_ms += 100)
            std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return false;
}

std::string layout_fingerprint(const place::Topology& topo) {
    std::string f;
    for (const place::NodeInfo& n : topo.nodes()) {
        const place::NodeType& t = topo.types()[static_cast<std::size_t>(n.type)];
        f += n.name + ":" + std::to_string(t.gpus) + "x" + std::to_string(t.slots_per_gpu) + ":";
        for (int i : t.island) f += std::to_string(i) + ",";
        f += ":" + (n.link >= 0 ? topo.link_names()[static_cast<std::size_t>(n.link)] : "") + ";";
    }
    return f;
}

struct LayoutWatch::Shared {
    std::mutex mu;
    std::condition_variable wake;
    bool stopping = false;
};

LayoutWatch::LayoutWatch(const Config& yaml, const place::Topology& current, int interval_s, std::atomic<bool>& changed)
    : shared_(std::make_shared<Shared>()) {
    if (interval_s <= 0) return;
    // `changed` outlives the watch: it is colocd's, for the whole run.
    std::thread([s = shared_, yaml, was = layout_fingerprint(current), interval_s, &changed] {
        std::unique_lock<std::mutex> lock(s->mu);
        while (!s->wake.wait_for(lock, std::chrono::seconds(interval_s), [&] { return s->stopping; })) {
            lock.unlock();
            std::string now;
            try {
                now = layout_fingerprint(read_slurm_layout(yaml).topology);
            } catch (const std::exception& e) {
                log_debug(std::string("layout watch: ") + e.what());
            }
            lock.lock();
            if (!now.empty() && now != was && !s->stopping) {
                changed.store(true);
                return;
            }
        }
    }).detach();
}

LayoutWatch::~LayoutWatch() {
    std::lock_guard<std::mutex> lock(shared_->mu);
    shared_->stopping = true;
    shared_->wake.notify_all();
}

}  // namespace coloc::daemon
