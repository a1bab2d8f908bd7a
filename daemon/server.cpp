#include "daemon/server.hpp"

#include <sys/stat.h>
#include <zmq.h>
#include <cerrno>
#include <chrono>
#include <filesystem>
#include <stdexcept>
#include <string_view>

#include "daemon/log.hpp"
#include "daemon/metrics_http.hpp"
#include "daemon/service/service.hpp"
#include "proto/envelope.hpp"
#include "proto/errors.hpp"

namespace coloc::daemon {

namespace {

struct Frame {
    zmq_msg_t msg;
    Frame() { zmq_msg_init(&msg); }
    ~Frame() { zmq_msg_close(&msg); }
    std::string_view view() { return {static_cast<const char*>(zmq_msg_data(&msg)), zmq_msg_size(&msg)}; }
};

}  // namespace

Server::Server(const std::vector<std::string>& endpoints, const std::string& secret_key,
               const std::vector<std::string>& plain) {
    ctx_ = zmq_ctx_new();
    sock_ = zmq_socket(ctx_, ZMQ_ROUTER);
    int zero = 0;
    zmq_setsockopt(sock_, ZMQ_LINGER, &zero, sizeof zero);
    // Oversized messages are cut off by ZeroMQ before they cost memory; the decoder also checks.
    std::int64_t max = static_cast<std::int64_t>(proto::kMaxMessage) * 4;
    zmq_setsockopt(sock_, ZMQ_MAXMSGSIZE, &max, sizeof max);
    // CURVE proves to each client that it is colocd before the client sends a request; the
    // client's own key is ephemeral (munge says who it is), so every client key is let in.
    if (!secret_key.empty()) {
        int on = 1;
        if (zmq_setsockopt(sock_, ZMQ_CURVE_SERVER, &on, sizeof on) != 0 ||
            zmq_setsockopt(sock_, ZMQ_CURVE_SECRETKEY, secret_key.data(), secret_key.size()) != 0) {
            std::string why = zmq_strerror(zmq_errno());
            zmq_close(sock_);
            zmq_ctx_term(ctx_);
            throw std::runtime_error("cannot set up CURVE: " + why);
        }
    }
    for (const auto& ep : endpoints) bind(ep);
    // ZeroMQ takes a socket's security options at each bind: these endpoints go without.
    if (!plain.empty()) {
        int off = 0;
        zmq_setsockopt(sock_, ZMQ_CURVE_SERVER, &off, sizeof off);
        for (const auto& ep : plain) bind(ep);
    }
    // Every user may connect; munge decides what each may do.
    for (const auto& p : ipc_paths_) chmod(p.c_str(), 0666);
}

void Server::bind(const std::string& ep) {
    if (ep.rfind("ipc://", 0) == 0) {
        std::filesystem::path path = ep.substr(6);
        std::error_code ec;
        if (path.has_parent_path()) std::filesystem::create_directories(path.parent_path(), ec);
        ipc_paths_.push_back(path.string());
    }
    if (zmq_bind(sock_, ep.c_str()) != 0) {
        std::string why = zmq_strerror(zmq_errno());
        zmq_close(sock_);
        zmq_ctx_term(ctx_);
        throw std::runtime_error("cannot listen on " + ep + ": " + why);
    }
}

Server::~Server() {
    zmq_close(sock_);
    zmq_ctx_term(ctx_);
    for (const auto& p : ipc_paths_) {
        std::error_code ec;
        std::filesystem::remove(p, ec);
    }
}

void Server::run(Service& service, const std::atomic<bool>& stop, int poll_ms, MetricsHttpServer* metrics) {
    const int sync_fd = service.commits().sync_fd();
    while (!stop.load()) {
        zmq_pollitem_t items[3] = {{sock_, 0, ZMQ_POLLIN, 0},
                                   {nullptr, sync_fd, ZMQ_POLLIN, 0},
                                   {nullptr, metrics ? metrics->fd() : -1, ZMQ_POLLIN, 0}};
        int rc = zmq_poll(items, metrics ? 3 : 2, poll_ms);
        if (rc < 0) {
            if (zmq_errno() == EINTR) continue;
            throw std::runtime_error(std::string("poll failed: ") + zmq_strerror(zmq_errno()));
        }
        if (items[1].revents & ZMQ_POLLIN) {
            service.commits().sync_events_seen();
            send_settled(service, false);
        }
        if (metrics) metrics->serve();  // also closes clients past their deadline
        // Between requests: each part's work that is due (none waits for Slurm or the disk for long).
        const std::int64_t now_ms =
            std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now().time_since_epoch())
                .count();
        for (Periodic* task : service.periodic()) task->run_due(now_ms);
        if (!(items[0].revents & ZMQ_POLLIN)) continue;
        serve_round(service);
    }
    send_settled(service, true);  // what was handled is answered before colocd stops
}

// Takes every request already waiting (up to kMaxRound), hands the well-formed ones to the
// service as one group commit, and queues the replies for their sync.
void Server::serve_round(Service& service) {
    Outgoing out;
    std::vector<Received>& round = out.requests;
    while (round.size() < kMaxRound) {
        // A REQ peer sends [identity][empty][body]; anything else is answered with an error.
        Frame identity, delimiter, body;
        if (zmq_msg_recv(&identity.msg, sock_, ZMQ_DONTWAIT) < 0) break;
        if (!zmq_msg_more(&identity.msg)) continue;
        zmq_msg_recv(&delimiter.msg, sock_, 0);
        int frames = 0;
        if (zmq_msg_more(&delimiter.msg)) {
            zmq_msg_recv(&body.msg, sock_, 0);
            frames = 1;
            while (zmq_msg_more(&body.msg)) {  // drain unexpected frames, keeping the first body
                Frame extra;
                zmq_msg_recv(&extra.msg, sock_, 0);
                ++frames;
                if (!zmq_msg_more(&extra.msg)) break;
            }
        }
        round.push_back(
            {std::string(identity.view()), std::string(body.view()), frames == 1 && zmq_msg_size(&delimiter.msg) == 0});
    }
    std::vector<std::string_view> bodies;
    bodies.reserve(round.size());
    for (const Received& p : round)
        if (p.well_formed) bodies.push_back(p.body);
    out.round = service.start_round(bodies);
    outbox_.push_back(std::move(out));
    send_settled(service, false);
}

void Server::send_settled(Service& service, bool wait) {
    while (!outbox_.empty() && (wait || service.commits().settled(outbox_.front().round))) {
        send_round(service, outbox_.front());
        outbox_.pop_front();
    }
}

void Server::send_round(Service& service, Outgoing& out) {
    std::vector<std::string> replies = service.commits().settle(std::move(out.round));
    const auto t0 = std::chrono::steady_clock::now();
    std::size_t next = 0;
    for (const Received& p : out.requests) {
        // The service wrote each reply once, its request's nonce in it.
        const std::string reply =
            p.well_formed ? std::move(replies[next++])
                          : proto::error_reply(proto::code::kBadJson, "expected one JSON message per request");
        zmq_send(sock_, p.identity.data(), p.identity.size(), ZMQ_SNDMORE);
        zmq_send(sock_, "", 0, ZMQ_SNDMORE);
        zmq_send(sock_, reply.data(), reply.size(), 0);
    }
    service.commits().replied(next, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
}

}  // namespace coloc::daemon
