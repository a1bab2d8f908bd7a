#include "proto/client.hpp"

#include <zmq.h>
#include <chrono>

#include "proto/envelope.hpp"
#include "proto/errors.hpp"

namespace coloc::proto {

namespace {

using Clock = std::chrono::steady_clock;

class ZmqCall {
public:
    ZmqCall() : ctx_(zmq_ctx_new()) {
        if (!ctx_) throw ProtoError(code::kUnavailable, "cannot create a ZeroMQ context");
        zmq_ctx_set(ctx_, ZMQ_BLOCKY, 0);
        sock_ = zmq_socket(ctx_, ZMQ_REQ);
        if (!sock_)
            throw ProtoError(code::kUnavailable, std::string("cannot create a socket: ") + zmq_strerror(zmq_errno()));
        int zero = 0;
        zmq_setsockopt(sock_, ZMQ_LINGER, &zero, sizeof zero);
    }
    ~ZmqCall() {
        if (sock_) zmq_close(sock_);
        if (ctx_) zmq_ctx_term(ctx_);
    }
    ZmqCall(const ZmqCall&) = delete;
    ZmqCall& operator=(const ZmqCall&) = delete;

    void* sock() const { return sock_; }

private:
    void* ctx_ = nullptr;
    void* sock_ = nullptr;
};

int remaining_ms(Clock::time_point deadline) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    return left > 0 ? static_cast<int>(left) : 0;
}

}  // namespace

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
    ZmqCall z;
    if (zmq_connect(z.sock(), endpoint.c_str()) != 0)
        throw ProtoError(code::kUnavailable, "cannot connect to " + endpoint + ": " + zmq_strerror(zmq_errno()));
    int left = remaining_ms(deadline);
    zmq_setsockopt(z.sock(), ZMQ_SNDTIMEO, &left, sizeof left);
    if (zmq_send(z.sock(), wire.data(), wire.size(), 0) < 0)
        throw ProtoError(code::kUnavailable, "cannot send to " + endpoint + ": " + zmq_strerror(zmq_errno()));

    zmq_pollitem_t item{z.sock(), 0, ZMQ_POLLIN, 0};
    int rc = zmq_poll(&item, 1, remaining_ms(deadline));
    if (rc <= 0)
        throw ProtoError(code::kUnavailable, "colocd at " + endpoint + " did not answer within " +
                                                 std::to_string(options.timeout_ms) + " ms");
    zmq_msg_t msg;
    zmq_msg_init(&msg);
    if (zmq_msg_recv(&msg, z.sock(), ZMQ_DONTWAIT) < 0) {
        zmq_msg_close(&msg);
        throw ProtoError(code::kUnavailable, "cannot read the reply from " + endpoint);
    }
    std::string reply(static_cast<const char*>(zmq_msg_data(&msg)), zmq_msg_size(&msg));
    zmq_msg_close(&msg);
    return open_reply(reply);
}

}  // namespace coloc::proto
