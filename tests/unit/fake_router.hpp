// A colocd stand-in on a ROUTER socket (tests only): it records the last frame of every message
// that reaches it and answers each with `answer` (the request's bytes in, the reply's out). Without
// an answer it is frozen: it reads nothing and answers nothing. With a secret key it speaks CURVE
// as that server.
#pragma once

#include <doctest/doctest.h>
#include <zmq.h>

#include <atomic>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace coloc::test {

class FakeRouter {
public:
    using Answer = std::function<std::string(const std::string&)>;

    FakeRouter(std::string endpoint, Answer answer, const std::string& secret_key = "")
        : endpoint(std::move(endpoint)), answer_(std::move(answer)) {
        int zero = 0, on = 1;
        zmq_setsockopt(sock_, ZMQ_LINGER, &zero, sizeof zero);
        if (!secret_key.empty()) {
            zmq_setsockopt(sock_, ZMQ_CURVE_SERVER, &on, sizeof on);
            zmq_setsockopt(sock_, ZMQ_CURVE_SECRETKEY, secret_key.data(), secret_key.size());
        }
        REQUIRE(zmq_bind(sock_, this->endpoint.c_str()) == 0);
        if (answer_) thread_ = std::thread([this] { serve(); });
    }
    ~FakeRouter() {
        stop_ = true;
        if (thread_.joinable()) thread_.join();
        zmq_close(sock_);
        zmq_ctx_term(ctx_);
    }
    FakeRouter(const FakeRouter&) = delete;
    FakeRouter& operator=(const FakeRouter&) = delete;

    // What reached it so far, the requests' bytes in order.
    std::vector<std::string> received() {
        std::lock_guard lock(mu_);
        return received_;
    }

    const std::string endpoint;

private:
    void serve() {
        while (!stop_) {
            zmq_pollitem_t item{sock_, 0, ZMQ_POLLIN, 0};
            if (zmq_poll(&item, 1, 10) <= 0) continue;
            std::vector<std::string> frames;
            for (int more = 1; more;) {
                zmq_msg_t m;
                zmq_msg_init(&m);
                zmq_msg_recv(&m, sock_, 0);
                frames.emplace_back(static_cast<const char*>(zmq_msg_data(&m)), zmq_msg_size(&m));
                more = zmq_msg_more(&m);
                zmq_msg_close(&m);
            }
            {
                std::lock_guard lock(mu_);
                received_.push_back(frames.back());
            }
            const std::string reply = answer_(frames.back());
            for (std::size_t i = 0; i + 1 < frames.size(); ++i)
                zmq_send(sock_, frames[i].data(), frames[i].size(), ZMQ_SNDMORE);
            zmq_send(sock_, reply.data(), reply.size(), 0);
        }
    }

    void* ctx_ = zmq_ctx_new();
    void* sock_ = zmq_socket(ctx_, ZMQ_ROUTER);
    Answer answer_;
    std::atomic<bool> stop_{false};
    std::mutex mu_;
    std::vector<std::string> received_;
    std::thread thread_;
};

}  // namespace coloc::test
