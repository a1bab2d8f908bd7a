// coloc-load: several concurrent clients, each running jobs through colocd as the plugin would
// (place, started, ended), with real munge credentials. Every acknowledged request is written to
// the client's ack file before the next one is sent, so that a test which kills colocd knows
// exactly what colocd promised to have stored. A request without an answer (colocd gone) is
// sent again until it is answered or the time is up.
//
//   coloc-load --endpoint EP --acks DIR [--clients N] [--duration-s S] [--first-job J]
//              [--nodes n1,n2] [--timeout-ms T] [--stop-file PATH]
//
// Ack lines: `place JOB NODE DECISION`, `started JOB NODE`, `ended JOB NODE`.
// The last line of output: `acks P S E retries R refused X`.
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <sys/stat.h>
#include <CLI/CLI.hpp>

#include "proto/client.hpp"
#include "proto/errors.hpp"
#include "proto/messages.hpp"

namespace {

using Clock = std::chrono::steady_clock;
using coloc::proto::json;

struct Totals {
    std::atomic<long> place{0}, started{0}, ended{0}, retries{0}, refused{0};
};

struct Options {
    std::string endpoint, acks_dir, munge_socket, stop_file;
    int clients = 4, duration_s = 10, timeout_ms = 1000;
    long first_job = 1;
    std::vector<std::string> nodes = {"n1", "n2", "n3", "n4"};
};

class Client {
public:
    Client(const Options& o, int index, Totals& totals, Clock::time_point until)
        : o_(o),
          index_(index),
          totals_(totals),
          until_(until),
          acks_(o.acks_dir + "/client-" + std::to_string(index) + ".acks", std::ios::app) {
        if (!acks_) throw std::runtime_error("cannot write " + o.acks_dir);
    }

    void run() {
        for (long i = 0; !time_up(); ++i) {
            const long job = o_.first_job + static_cast<long>(index_) * 1000000 + i;
            const std::string node = o_.nodes[static_cast<std::size_t>(job) % o_.nodes.size()];
            coloc::proto::PlaceRequest place;
            place.job_id = job;
            place.job_uid = 1000;
            place.node = node;
            place.partition = "bind";
            place.mode = coloc::proto::GpuMode::Bind;
            place.slots = 1;
            place.job_nodes = {node};
            json reply;
            if (!send(place.to_json(), reply)) continue;
            const auto decision = reply.value("decision", std::int64_t{0});
            ack("place " + std::to_string(job) + " " + node + " " + std::to_string(decision), totals_.place);

            coloc::proto::StartedReport started{
                job, 1000, node, decision, reply.value("gpus", std::vector<int>{}), std::time(nullptr)};
            if (!send(started.to_json(), reply)) continue;
            ack("started " + std::to_string(job) + " " + node, totals_.started);

            coloc::proto::EndedReport ended{job, node, 0, 0.5, std::time(nullptr)};
            if (!send(ended.to_json(), reply)) continue;
            ack("ended " + std::to_string(job) + " " + node, totals_.ended);
        }
    }

private:
    // True once answered ok; false when refused (counted and reported) or the time is up.
    bool send(const json& body, json& reply) {
        coloc::proto::CallOptions call{o_.munge_socket, o_.timeout_ms};
        while (!time_up()) {
            try {
                reply = coloc::proto::call(o_.endpoint, body, call);
                return true;
            } catch (const coloc::proto::ProtoError& e) {
                if (e.code() != coloc::proto::code::kUnavailable) {
                    ++totals_.refused;
                    std::cerr << "coloc-load: client " << index_ << ": " << body.value("op", "")
                              << " refused: " << e.code() << ": " << e.what() << "\n";
                    return false;
                }
                ++totals_.retries;
                std::this_thread::sleep_for(std::chrono::milliseconds(10));
            }
        }
        return false;
    }

    bool time_up() const {
        struct stat st {};
        return Clock::now() >= until_ || (!o_.stop_file.empty() && stat(o_.stop_file.c_str(), &st) == 0);
    }

    void ack(const std::string& line, std::atomic<long>& counter) {
        acks_ << line << "\n";
        acks_.flush();
        ++counter;
    }

    const Options& o_;
    int index_;
    Totals& totals_;
    Clock::time_point until_;
    std::ofstream acks_;
};

}  // namespace

int main(int argc, char** argv) {
    Options o;
    std::string nodes;
    CLI::App app{"coloc-load: concurrent place/started/ended clients against colocd"};
    app.add_option("--endpoint", o.endpoint, "colocd endpoint")->required();
    app.add_option("--acks", o.acks_dir, "directory for the ack files")->required();
    app.add_option("--clients", o.clients, "concurrent clients")->check(CLI::Range(1, 64));
    app.add_option("--duration-s", o.duration_s, "how long to run")->check(CLI::Range(1, 3600));
    app.add_option("--first-job", o.first_job, "first job id")->check(CLI::Range(1L, 3000000000L));
    app.add_option("--timeout-ms", o.timeout_ms, "deadline of each request")->check(CLI::Range(10, 60000));
    app.add_option("--nodes", nodes, "comma-separated node names");
    app.add_option("--stop-file", o.stop_file, "stop once this file exists");
    CLI11_PARSE(app, argc, argv);
    if (const char* s = std::getenv("COLOC_MUNGE_SOCKET")) o.munge_socket = s;
    if (!nodes.empty()) {
        o.nodes.clear();
        std::stringstream in(nodes);
        for (std::string n; std::getline(in, n, ',');)
            if (!n.empty()) o.nodes.push_back(n);
    }
    Totals totals;
    const auto until = Clock::now() + std::chrono::seconds(o.duration_s);
    std::vector<std::thread> threads;
    try {
        std::vector<std::unique_ptr<Client>> clients;
        for (int i = 0; i < o.clients; ++i) clients.push_back(std::make_unique<Client>(o, i, totals, until));
        for (auto& c : clients) threads.emplace_back([&c] { c->run(); });
        for (auto& t : threads) t.join();
    } catch (const std::exception& e) {
        std::cerr << "coloc-load: " << e.what() << "\n";
        return 2;
    }
    std::cout << "acks " << totals.place << " " << totals.started << " " << totals.ended << " retries "
              << totals.retries << " refused " << totals.refused << "\n";
    return totals.refused == 0 ? 0 : 1;
}
