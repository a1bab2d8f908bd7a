// colocd's server on a private ipc socket, serving from a thread for the length of a test.
#pragma once

#include <atomic>
#include <string>
#include <thread>

#include "config/config.hpp"
#include "daemon/server.hpp"
#include "daemon/service/service.hpp"
#include "tests/unit/test_env.hpp"

namespace coloc::test {

// The colocd the server tests run: one node of four GPUs with two slots each, its history in
// the scratch file `database`.
inline daemon::Config one_node_config(const std::string& database) {
    daemon::Config c = daemon::parse_config(R"(node_types: { quad: { gpus: 4, slots_per_gpu: 2 } }
nodes: [ { names: "n1", type: quad } ]
)",
                                            "test.yaml");
    c.database = scratch(database);
    c.munge_socket = munge_socket();
    return c;
}

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
