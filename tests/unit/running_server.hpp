// colocd's server on a private ipc socket, serving from a thread for the length of a test.
#pragma once

#include <atomic>
#include <string>
#include <thread>

#include "daemon/server.hpp"
#include "daemon/service/service.hpp"
#include "tests/unit/test_env.hpp"

namespace coloc::test {

struct RunningServer {
    std::string endpoint = "ipc://" + scratch("colocd.sock");
    std::string secret_key;  // colocd's CURVE secret key (proto/curve.hpp); empty = none
    daemon::Service service;
    daemon::Server server{{endpoint}, secret_key};
    std::atomic<bool> stop{false};
    std::thread thread{[this] { server.run(service, stop, 20); }};

    explicit RunningServer(daemon::Config c, std::string key = "")
        : secret_key(std::move(key)), service(std::move(c)) {}
    ~RunningServer() {
        stop = true;
        thread.join();
    }
};

}  // namespace coloc::test
