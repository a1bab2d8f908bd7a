#include "daemon/metrics_http.hpp"

#include <netdb.h>
#include <prometheus/collectable.h>
#include <prometheus/exposer.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <stdexcept>
#include <vector>

#include "daemon/log.hpp"

namespace coloc::daemon {

// What a scrape and the main loop share (the Exposer's threads hold it too).
struct MetricsHandoff {
    int event_fd = -1;  // an eventfd: each scrape adds 1
    std::mutex mutex;
    std::condition_variable answered_cv;
    std::uint64_t asked = 0, answered = 0;
    std::vector<prometheus::MetricFamily> families;  // the last snapshot served
};

namespace {

// A scrape, on one of the Exposer's threads: asks the main loop for a fresh snapshot.
class Scrape : public prometheus::Collectable {
public:
    explicit Scrape(std::shared_ptr<MetricsHandoff> h) : h_(std::move(h)) {}

    std::vector<prometheus::MetricFamily> Collect() const override {
        std::unique_lock lock(h_->mutex);
        const std::uint64_t ticket = ++h_->asked;
        const std::uint64_t one = 1;
        if (write(h_->event_fd, &one, sizeof one) < 0) return h_->families;
        h_->answered_cv.wait_for(lock, std::chrono::milliseconds(MetricsHttpServer::kScrapeWaitMs),
                                 [&] { return h_->answered >= ticket; });
        return h_->families;
    }

private:
    std::shared_ptr<MetricsHandoff> h_;
};

// civetweb listens on numeric addresses: a host name is resolved here, as a bind would.
std::string listening_address(const std::string& bind_address, int port, const std::string& where) {
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE;
    addrinfo* found = nullptr;
    if (int rc = getaddrinfo(bind_address.c_str(), std::to_string(port).c_str(), &hints, &found); rc != 0)
        throw std::runtime_error("cannot serve metrics on " + where + ": " + gai_strerror(rc));
    char host[NI_MAXHOST];
    const int rc = getnameinfo(found->ai_addr, found->ai_addrlen, host, sizeof host, nullptr, 0, NI_NUMERICHOST);
    const bool v6 = found->ai_family == AF_INET6;
    freeaddrinfo(found);
    if (rc != 0) throw std::runtime_error("cannot serve metrics on " + where + ": " + gai_strerror(rc));
    return (v6 ? "[" + std::string(host) + "]" : std::string(host)) + ":" + std::to_string(port);
}

}  // namespace

MetricsHttpServer::MetricsHttpServer(int port, const std::string& bind_address, Snapshot snapshot)
    : handoff_(std::make_shared<MetricsHandoff>()), snapshot_(std::move(snapshot)) {
    const std::string where = bind_address + " port " + std::to_string(port);
    if (port < 0 || port > 65535) throw std::runtime_error("cannot serve metrics on " + where + ": bad port");
    const std::string address = listening_address(bind_address, port, where);
    handoff_->event_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (handoff_->event_fd < 0)
        throw std::runtime_error("cannot serve metrics on " + where + ": eventfd: " + std::strerror(errno));
    try {
        exposer_ = std::make_unique<prometheus::Exposer>(address, 1);
    } catch (const std::exception& e) {
        close(handoff_->event_fd);
        throw std::runtime_error("cannot serve metrics on " + where + ": " + e.what());
    }
    collectable_ = std::make_shared<Scrape>(handoff_);
    exposer_->RegisterCollectable(collectable_, "/metrics$");  // "$": /metrics alone, not its prefixes
    const auto ports = exposer_->GetListeningPorts();
    port_ = ports.empty() ? port : ports.front();
}

MetricsHttpServer::~MetricsHttpServer() {
    exposer_.reset();
    close(handoff_->event_fd);
}

int MetricsHttpServer::fd() const { return handoff_->event_fd; }

void MetricsHttpServer::serve() {
    std::uint64_t count = 0;
    if (read(handoff_->event_fd, &count, sizeof count) < 0) return;  // none waits
    std::vector<prometheus::MetricFamily> families;
    bool fresh = true;
    try {
        families = metric_families(snapshot_());
    } catch (const std::exception& e) {
        log_error(std::string("metrics: ") + e.what() + "; the scrape gets the last snapshot served");
        fresh = false;
    }
    std::lock_guard lock(handoff_->mutex);
    if (fresh) handoff_->families = std::move(families);
    handoff_->answered = handoff_->asked;
    handoff_->answered_cv.notify_all();
}

}  // namespace coloc::daemon
