// coloc-send: sends one request body to colocd as the calling user and prints each reply, for
// tests that act as someone colocd must refuse (another user, a replayed or expired credential).
//   coloc-send [--replay] [--ttl S] [--delay-ms MS] [--proto V] ENDPOINT JSON
// --ttl gives the credential munge's time-to-live S, --delay-ms waits before sending (so that a
// short-lived credential expires), --replay sends the same bytes a second time, --proto sends it in
// protocol version V, as a plugin or colocctl of that version would (a rolling upgrade).
// The munge socket comes from COLOC_MUNGE_SOCKET. Exit 0 when every send got a reply.
#include <zmq.h>
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <string>
#include <thread>

#include "proto/auth.hpp"
#include "proto/envelope.hpp"

namespace {

std::string send_once(const std::string& endpoint, const std::string& bytes) {
    void* ctx = zmq_ctx_new();
    void* sock = zmq_socket(ctx, ZMQ_REQ);
    int linger = 0, timeout_ms = 5000;
    zmq_setsockopt(sock, ZMQ_LINGER, &linger, sizeof linger);
    zmq_setsockopt(sock, ZMQ_RCVTIMEO, &timeout_ms, sizeof timeout_ms);
    std::string out;
    if (zmq_connect(sock, endpoint.c_str()) == 0 && zmq_send(sock, bytes.data(), bytes.size(), 0) >= 0) {
        zmq_msg_t reply;
        zmq_msg_init(&reply);
        if (zmq_msg_recv(&reply, sock, 0) >= 0)
            out.assign(static_cast<const char*>(zmq_msg_data(&reply)), zmq_msg_size(&reply));
        zmq_msg_close(&reply);
    }
    zmq_close(sock);
    zmq_ctx_term(ctx);
    return out;
}

int usage() {
    std::cerr << "usage: coloc-send [--replay] [--ttl S] [--delay-ms MS] [--proto V] ENDPOINT JSON\n";
    return 2;
}

}  // namespace

int main(int argc, char** argv) {
    bool replay = false;
    int ttl_s = 0, delay_ms = 0, version = 0;
    int i = 1;
    for (; i < argc && argv[i][0] == '-'; ++i) {
        std::string a = argv[i];
        if (a == "--replay")
            replay = true;
        else if (a == "--ttl" && i + 1 < argc)
            ttl_s = std::atoi(argv[++i]);
        else if (a == "--delay-ms" && i + 1 < argc)
            delay_ms = std::atoi(argv[++i]);
        else if (a == "--proto" && i + 1 < argc)
            version = std::atoi(argv[++i]);
        else
            return usage();
    }
    if (argc - i != 2) return usage();
    const std::string endpoint = argv[i];
    const char* socket_env = std::getenv("COLOC_MUNGE_SOCKET");
    const std::string munge_socket = socket_env ? socket_env : "";
    try {
        auto body = coloc::proto::json::parse(argv[i + 1]);
        std::string bytes = coloc::proto::seal_request(body, munge_socket, ttl_s);
        if (version > 0) {
            body["v"] = version;
            const std::string b = body.dump();
            bytes = coloc::proto::with_credential(b, coloc::proto::make_credential(b, munge_socket, ttl_s));
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));
        for (int n = 0; n < (replay ? 2 : 1); ++n) {
            std::string reply = send_once(endpoint, bytes);
            if (reply.empty()) {
                std::cerr << "coloc-send: no reply from " << endpoint << "\n";
                return 1;
            }
            std::cout << reply << "\n";
        }
    } catch (const std::exception& e) {
        std::cerr << "coloc-send: " << e.what() << "\n";
        return 1;
    }
    return 0;
}
