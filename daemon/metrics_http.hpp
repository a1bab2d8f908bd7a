// The HTTP endpoint for Prometheus scrapes: prometheus-cpp's Exposer serves GET /metrics from
// its own threads. colocd's state belongs to its main loop, so a scrape does not read it: it asks
// the main loop, which polls fd() beside its ZeroMQ socket and answers in serve().
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "daemon/metrics.hpp"

namespace prometheus {
class Collectable;
class Exposer;
}  // namespace prometheus

namespace coloc::daemon {

struct MetricsHandoff;

class MetricsHttpServer {
public:
    using Snapshot = std::function<MetricsSnapshot()>;  // called on the thread that calls serve()

    // A scrape waits this long for the main loop; then it gets the last snapshot served.
    static constexpr int kScrapeWaitMs = 5000;

    // Listens on `port` (0: any free port) of `bind_address` (an IPv4/IPv6 address or a host
    // name; "0.0.0.0" or "::" for all). Throws std::runtime_error naming both when it cannot.
    MetricsHttpServer(int port, const std::string& bind_address, Snapshot snapshot);
    ~MetricsHttpServer();
    MetricsHttpServer(const MetricsHttpServer&) = delete;
    MetricsHttpServer& operator=(const MetricsHttpServer&) = delete;

    // Readable while a scrape waits for serve().
    int fd() const;
    // The port actually bound (useful with port 0).
    int port() const { return port_; }
    // Answers the scrapes waiting, without blocking.
    void serve();

private:
    std::shared_ptr<MetricsHandoff> handoff_;  // shared with the scrapes
    Snapshot snapshot_;
    std::shared_ptr<prometheus::Collectable> collectable_;
    int port_ = 0;
    std::unique_ptr<prometheus::Exposer> exposer_;  // last: its threads stop before the rest goes
};

}  // namespace coloc::daemon
