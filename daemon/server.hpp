// The ZeroMQ front of colocd: one ROUTER socket bound to every configured endpoint. Requests
// are handled one at a time through the Service (decisions are fast; ordering keeps state
// simple), and those waiting together in one poll round share one commit (group commit). A
// round's replies wait for its commit's sync (database_sync: full) in the outbox, in order,
// while the next rounds are handled: the disk's latency is not the request thread's.
#pragma once

#include <atomic>
#include <deque>
#include <string>
#include <vector>

#include "daemon/service/group_commit.hpp"

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
    // A request as received: who sent it (the ROUTER's identity frame) and its body.
    struct Received {
        std::string identity;
        std::string body;
        bool well_formed = false;
    };
    // A round waiting for its sync; its replies leave in the order the rounds came.
    struct Outgoing {
        std::vector<Received> requests;
        GroupCommit::PendingRound round;
    };
    void serve_round(Service& service);
    // Sends the rounds at the outbox's front that are settled; all of them when `wait`.
    void send_settled(Service& service, bool wait);
    void send_round(Service& service, Outgoing& out);
    void bind(const std::string& endpoint);

    std::deque<Outgoing> outbox_;

    void* ctx_ = nullptr;
    void* sock_ = nullptr;
    std::vector<std::string> ipc_paths_;
};

}  // namespace coloc::daemon
