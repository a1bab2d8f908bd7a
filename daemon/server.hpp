// The ZeroMQ front of colocd: one ROUTER socket bound to every configured endpoint. Requests
// are handled one at a time through the Service (decisions are fast; ordering keeps state
// simple), and those waiting together in one poll round share one commit (group commit).
#pragma once

#include <atomic>
#include <string>
#include <vector>

namespace coloc::daemon {

class Service;
class MetricsHttpServer;

class Server {
public:
    // Binds every endpoint, with CURVE when `secret_key` (colocd's, Z85: proto/curve.hpp) is
    // given, and every `plain` endpoint without; throws std::runtime_error naming the endpoint
    // that failed. Every reply echoes its request's nonce.
    explicit Server(const std::vector<std::string>& endpoints, const std::string& secret_key = "",
                    const std::vector<std::string>& plain = {});
    ~Server();
    Server(const Server&) = delete;
    Server& operator=(const Server&) = delete;

    // Serves until `stop` becomes true (checked at least every `poll_ms`), and the metrics
    // endpoint too when there is one.
    void run(Service& service, const std::atomic<bool>& stop, int poll_ms = 200, MetricsHttpServer* metrics = nullptr);

private:
    // Requests handled (and committed) together at most; bounds how long the first one waits.
    static constexpr std::size_t kMaxRound = 256;
    void serve_round(Service& service);
    void bind(const std::string& endpoint);

    void* ctx_ = nullptr;
    void* sock_ = nullptr;
    std::vector<std::string> ipc_paths_;
};

}  // namespace coloc::daemon
