// A minimal HTTP/1.0 endpoint for Prometheus scrapes: GET (or HEAD) /metrics, 404 for any other
// path, 405 for other methods, 400 for garbage or a request head over kMaxRequest bytes.
// Single-threaded and non-blocking: colocd's main loop polls fd() beside its ZeroMQ socket and
// calls serve() when it is readable (and at least every poll interval, to expire slow clients).
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <map>
#include <string>

namespace coloc::daemon {

class MetricsHttpServer {
public:
    using Clock = std::chrono::steady_clock;
    using Render = std::function<std::string()>;  // the body of a 200 reply

    static constexpr std::size_t kMaxRequest = 8192;  // request line and headers
    static constexpr std::size_t kMaxClients = 16;    // more are closed at once
    static constexpr int kClientTimeoutMs = 5000;     // a whole exchange, from accept to close

    // Listens on `port` (0: any free port) of `bind_address` (an IPv4/IPv6 address or a host
    // name; "0.0.0.0" or "::" for all). Throws std::runtime_error naming both when it cannot.
    MetricsHttpServer(int port, const std::string& bind_address, Render render);
    ~MetricsHttpServer();
    MetricsHttpServer(const MetricsHttpServer&) = delete;
    MetricsHttpServer& operator=(const MetricsHttpServer&) = delete;

    // One descriptor (an epoll set) that is readable whenever serve() has work to do.
    int fd() const { return epoll_fd_; }
    // The port actually bound (useful with port 0).
    int port() const { return port_; }
    // Does all work possible without blocking: accepts, reads, answers, closes, expires.
    void serve();

private:
    struct Client {
        std::string in;   // the request head so far
        std::string out;  // the reply, once known
        std::size_t sent = 0;
        bool draining = false;  // reply sent: read until the peer closes, so it gets the reply
        Clock::time_point deadline;
    };
    void accept_clients();
    void on_client(int fd, Client& c);
    void watch(int fd, unsigned events, bool add);
    void close_client(int fd);
    std::string respond(const std::string& head) const;

    int listen_fd_ = -1;
    int epoll_fd_ = -1;
    int port_ = 0;
    Render render_;
    std::map<int, Client> clients_;
};

}  // namespace coloc::daemon
