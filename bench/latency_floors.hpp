// bench/place-latency's floors, measured in the same run as colocd: what this machine allows
// for work as long as a decision, and for a sealed request's round trip with nothing of colocd's
// in between. Included by bench/place-latency.cpp, which gives the echo its REQ connection.
#pragma once

#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>
#include <zmq.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "bench/latency_stats.hpp"
#include "daemon/worker_pool.hpp"
#include "proto/auth.hpp"
#include "proto/envelope.hpp"
#include "proto/errors.hpp"

namespace coloc::bench {

// This machine's own tail for work as long as a decision: a fixed computation (arithmetic only,
// no memory to miss), timed as decisions are, its length calibrated to `target_us` at the median.
// Whatever its p99 is above its p50 the machine adds to any work of that length.
struct FixedWork {
    double p50_us = 0, p99_us = 0;
};
inline FixedWork fixed_work(double target_us, int samples) {
    volatile double x = 1;
    auto timed = [&](long steps) {
        const auto t0 = Clock::now();
        for (long k = 0; k < steps; ++k) x = x * 1.0000001 + 1e-9;
        return micros(Clock::now() - t0);
    };
    auto run = [&](long steps, int n) {
        std::vector<double> t;
        for (int i = 0; i < n; ++i) t.push_back(timed(steps));
        return t;
    };
    long steps = 1000;
    for (int round = 0; round < 4; ++round)
        steps =
            std::max(1L, static_cast<long>(static_cast<double>(steps) * target_us / percentile(run(steps, 200), 0.5)));
    const std::vector<double> t = run(steps, samples);
    return {percentile(t, 0.5), percentile(t, 0.99)};
}

// The disk's own floor for an acknowledged write: with database_sync: full (colocd's default)
// every reply that stores something waits for an fdatasync of the WAL, which the sealed echo does
// not. A page overwritten and synced, `samples` times, in a file of `dir`.
struct SyncFloor {
    double p50_us = 0, p99_us = 0;
};
inline SyncFloor sync_floor(const std::string& dir, int samples) {
    const std::string path = dir + "/sync-floor.tmp";
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0) throw std::runtime_error("cannot create " + path);
    std::vector<char> page(4096, 'x');
    std::vector<double> t;
    for (int i = 0; i < samples; ++i) {
        if (::pwrite(fd, page.data(), page.size(), static_cast<off_t>(i % 16) * 4096) < 0) break;
        const auto t0 = Clock::now();
        if (::fdatasync(fd) != 0) break;
        t.push_back(micros(Clock::now() - t0));
    }
    ::close(fd);
    ::unlink(path.c_str());
    return {percentile(t, 0.5), percentile(t, 0.99)};
}

// ZeroMQ REQ -> ROUTER echo over ipc:// with the same clients and requests: the transport's own
// round trip, which colocd cannot beat. Sealed, it is the floor of colocd's launch path: each
// client seals every request afresh as the plugin does, and the echo opens and checks each
// credential on as many threads as colocd (WorkerPool, kOpeners + the serving thread) before it
// answers, with nothing of colocd's in between. `Connection(endpoint).round_trip(wire)` sends one
// request and waits for its answer.
struct EchoResult {
    std::vector<double> latency_us;
    double seconds = 0;
};

template <class Connection>
EchoResult echo_baseline(int clients, long requests, const proto::json& sample, const std::string& socket, bool sealed,
                         int openers_count) {
    char tmpl[] = "/tmp/coloc-bench-echo.XXXXXX";
    if (!mkdtemp(tmpl)) throw std::runtime_error("mkdtemp failed");
    const std::string endpoint = std::string("ipc://") + tmpl + "/echo.sock";
    void* ctx = zmq_ctx_new();
    void* router = zmq_socket(ctx, ZMQ_ROUTER);
    int zero = 0;
    zmq_setsockopt(router, ZMQ_LINGER, &zero, sizeof zero);
    if (zmq_bind(router, endpoint.c_str()) != 0) throw std::runtime_error("cannot bind " + endpoint);
    std::atomic<bool> stop{false};
    std::atomic<long> refused{0};
    std::thread server([&] {
        daemon::WorkerPool openers(openers_count);
        struct Pending {
            std::string identity, body, reply;
        };
        std::vector<Pending> round;
        while (!stop) {
            zmq_pollitem_t item{router, 0, ZMQ_POLLIN, 0};
            if (zmq_poll(&item, 1, 20) <= 0) continue;
            round.clear();
            zmq_msg_t frame;
            zmq_msg_init(&frame);
            while (zmq_msg_recv(&frame, router, ZMQ_DONTWAIT) >= 0) {  // [identity][empty][body]
                Pending p;
                for (int part = 0; part < 3; ++part) {
                    const std::string bytes(static_cast<const char*>(zmq_msg_data(&frame)), zmq_msg_size(&frame));
                    if (part == 0) p.identity = bytes;
                    if (part == 2) p.body = bytes;
                    if (part < 2) zmq_msg_recv(&frame, router, 0);
                }
                round.push_back(std::move(p));
            }
            zmq_msg_close(&frame);
            openers.for_each(round.size(), [&](std::size_t i) {
                if (!sealed) {
                    round[i].reply = round[i].body;
                    return;
                }
                try {
                    const proto::Request req = proto::open_request(round[i].body);
                    proto::verify_credential(req.cred, req.canonical, socket, 300);
                    round[i].reply = proto::ok_reply();
                } catch (const std::exception& e) {
                    ++refused;
                    round[i].reply = proto::error_reply("unauthorised", e.what());
                }
            });
            for (const Pending& p : round) {
                zmq_send(router, p.identity.data(), p.identity.size(), ZMQ_SNDMORE);
                zmq_send(router, "", 0, ZMQ_SNDMORE);
                zmq_send(router, p.reply.data(), p.reply.size(), 0);
            }
        }
    });
    const std::string wire = proto::seal_request(sample, socket);
    std::vector<std::vector<double>> per(static_cast<std::size_t>(clients));
    std::vector<std::thread> threads;
    const auto start = Clock::now();
    for (int c = 0; c < clients; ++c)
        threads.emplace_back([&, c] {
            Connection conn(endpoint);
            proto::json body = sample;
            for (long i = c; i < requests; i += clients) {
                const auto t0 = Clock::now();
                if (sealed) {
                    body["job_id"] = 1'000'000 + i;
                    conn.round_trip(proto::seal_request(body, socket));
                } else {
                    conn.round_trip(wire);
                }
                per[static_cast<std::size_t>(c)].push_back(micros(Clock::now() - t0));
            }
        });
    for (auto& t : threads) t.join();
    EchoResult out;
    out.seconds = std::chrono::duration<double>(Clock::now() - start).count();
    stop = true;
    server.join();
    zmq_close(router);
    zmq_ctx_term(ctx);
    std::filesystem::remove_all(tmpl);
    if (refused > 0)
        throw std::runtime_error("the sealed echo refused " + std::to_string(refused.load()) + " credentials");
    for (auto& v : per) out.latency_us.insert(out.latency_us.end(), v.begin(), v.end());
    return out;
}

}  // namespace coloc::bench
