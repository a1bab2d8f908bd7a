#include "proto/client.hpp"

#include <zmq.h>
#include <chrono>
#include <cstdint>
#include <cstring>

#include "proto/curve.hpp"
#include "proto/envelope.hpp"
#include "proto/errors.hpp"

namespace coloc::proto {

namespace {

using Clock = std::chrono::steady_clock;

constexpr int kHandshakeFailures =
    ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL | ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL | ZMQ_EVENT_HANDSHAKE_FAILED_AUTH;

int remaining_ms(Clock::time_point deadline) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    return left > 0 ? static_cast<int>(left) : 0;
}

ProtoError transport_error(const std::string& what, const std::string& endpoint) {
    return ProtoError(code::kUnavailable, what + " " + endpoint + ": " + zmq_strerror(zmq_errno()));
}

}  // namespace

Connection::Connection(const std::string& endpoint, const std::string& server_key) : endpoint_(endpoint) {
    ctx_ = zmq_ctx_new();
    if (!ctx_) throw ProtoError(code::kUnavailable, "cannot create a ZeroMQ context");
    zmq_ctx_set(ctx_, ZMQ_BLOCKY, 0);
    sock_ = zmq_socket(ctx_, ZMQ_REQ);
    if (!sock_) {
        zmq_ctx_term(ctx_);
        throw transport_error("cannot create a socket for", endpoint);
    }
    int zero = 0;
    zmq_setsockopt(sock_, ZMQ_LINGER, &zero, sizeof zero);
    try {
        if (!server_key.empty()) {
            // An ephemeral key pair of our own: colocd authenticates itself, munge the user.
            char pub[kCurveKeyChars + 1], sec[kCurveKeyChars + 1];
            if (server_key.size() != kCurveKeyChars || zmq_curve_keypair(pub, sec) != 0 ||
                zmq_setsockopt(sock_, ZMQ_CURVE_SERVERKEY, server_key.c_str(), server_key.size()) != 0 ||
                zmq_setsockopt(sock_, ZMQ_CURVE_PUBLICKEY, pub, kCurveKeyChars) != 0 ||
                zmq_setsockopt(sock_, ZMQ_CURVE_SECRETKEY, sec, kCurveKeyChars) != 0)
                throw transport_error("cannot set up CURVE for", endpoint);
            if (zmq_socket_monitor(sock_, "inproc://handshake", kHandshakeFailures) != 0)
                throw transport_error("cannot watch the handshake with", endpoint);
            monitor_ = zmq_socket(ctx_, ZMQ_PAIR);
            if (!monitor_ || zmq_connect(monitor_, "inproc://handshake") != 0)
                throw transport_error("cannot watch the handshake with", endpoint);
            zmq_setsockopt(monitor_, ZMQ_LINGER, &zero, sizeof zero);
        }
        if (zmq_connect(sock_, endpoint.c_str()) != 0) throw transport_error("cannot connect to", endpoint);
    } catch (...) {
        close();
        throw;
    }
}

Connection::~Connection() { close(); }

void Connection::close() {
    if (monitor_) zmq_close(monitor_);
    if (sock_) zmq_close(sock_);
    if (ctx_) zmq_ctx_term(ctx_);
    monitor_ = sock_ = ctx_ = nullptr;
}

void Connection::refuse_handshake() {
    zmq_msg_t msg;
    zmq_msg_init(&msg);
    std::uint16_t event = 0;
    // The first frame: the event (16 bits), then its value.
    if (zmq_msg_recv(&msg, monitor_, ZMQ_DONTWAIT) >= 6) std::memcpy(&event, zmq_msg_data(&msg), sizeof event);
    zmq_msg_close(&msg);
    const std::string why = event == ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL
                                ? "it does not speak CURVE, or broke the handshake"
                            : event == ZMQ_EVENT_HANDSHAKE_FAILED_AUTH ? "it refused our key"
                                                                       : "it holds another key, or speaks no CURVE";
    throw ProtoError(code::kUnavailable, "the server at " + endpoint_ + " failed the CURVE handshake (" + why +
                                             "): it is not colocd, and nothing was sent to it");
}

std::string Connection::round_trip(const std::string& wire, int timeout_ms) {
    const auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms < 0 ? 0 : timeout_ms);
    auto left = [&] { return timeout_ms < 0 ? -1 : remaining_ms(deadline); };
    int send_ms = left();
    zmq_setsockopt(sock_, ZMQ_SNDTIMEO, &send_ms, sizeof send_ms);
    if (zmq_send(sock_, wire.data(), wire.size(), 0) < 0) throw transport_error("cannot send to", endpoint_);
    zmq_pollitem_t items[2] = {{sock_, 0, ZMQ_POLLIN, 0}, {monitor_, 0, ZMQ_POLLIN, 0}};
    for (;;) {
        const int rc = zmq_poll(items, monitor_ ? 2 : 1, left());
        if (rc < 0 && zmq_errno() == EINTR) continue;
        if (rc <= 0)
            throw ProtoError(code::kUnavailable,
                             "colocd at " + endpoint_ + " did not answer within " + std::to_string(timeout_ms) + " ms");
        if (items[0].revents & ZMQ_POLLIN) break;
        refuse_handshake();
    }
    zmq_msg_t msg;
    zmq_msg_init(&msg);
    if (zmq_msg_recv(&msg, sock_, ZMQ_DONTWAIT) < 0) {
        zmq_msg_close(&msg);
        throw transport_error("cannot read the reply from", endpoint_);
    }
    std::string reply(static_cast<const char*>(zmq_msg_data(&msg)), zmq_msg_size(&msg));
    zmq_msg_close(&msg);
    return reply;
}

nlohmann::json call(const std::string& endpoint, const nlohmann::json& body, const CallOptions& options) {
    const auto t0 = Clock::now();
    const auto deadline = t0 + std::chrono::milliseconds(options.timeout_ms);
    std::string wire = seal_request(body, options.munge_socket);
    if (options.munge_ms) *options.munge_ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
    if (remaining_ms(deadline) == 0)
        throw ProtoError(code::kUnavailable, "no time left after making the munge credential");
    CallOptions rest = options;
    rest.timeout_ms = remaining_ms(deadline);
    return call_sealed(endpoint, wire, rest);
}

nlohmann::json call_sealed(const std::string& endpoint, const std::string& wire, const CallOptions& options) {
    const auto deadline = Clock::now() + std::chrono::milliseconds(options.timeout_ms);
    Connection connection(endpoint, options.server_key);
    const std::string reply = connection.round_trip(wire, remaining_ms(deadline));
    try {
        return open_reply(reply, request_nonce(wire));
    } catch (const ProtoError& e) {
        if (e.code() != code::kReplyMismatch) throw;
        throw ProtoError(e.code(), "refused the reply from " + endpoint + ": " + e.what());
    }
}

}  // namespace coloc::proto
