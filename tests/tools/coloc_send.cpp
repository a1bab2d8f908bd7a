// coloc-send: sends one request body to colocd as the calling user and prints each reply, for
// tests that act as someone colocd must refuse (another user, a replayed or expired credential).
//   coloc-send [--replay] [--ttl S] [--delay-ms MS] [--proto V] ENDPOINT JSON
// --ttl gives the credential munge's time-to-live S, --delay-ms waits before sending (so that a
// short-lived credential expires), --replay sends the same bytes a second time, --proto sends it in
// protocol version V, as a plugin or colocctl of that version would (a rolling upgrade).
// The munge socket comes from COLOC_MUNGE_SOCKET, colocd's public CURVE key file (as colocctl's)
// from COLOC_SERVER_KEY. Exit 0 when every send got a reply that answers it.
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <string>
#include <thread>

#include "proto/auth.hpp"
#include "proto/client.hpp"
#include "proto/curve.hpp"
#include "proto/envelope.hpp"

namespace {

// The reply's bytes as colocd sent them, once proto::verify_reply has found it answers `bytes`
// (its nonce); empty when none came or it was refused (the reason on stderr).
std::string send_once(const std::string& endpoint, const std::string& bytes, const std::string& server_key) {
    try {
        coloc::proto::Connection connection(endpoint, server_key);
        std::string reply = connection.round_trip(bytes, 5000);
        coloc::proto::verify_reply(reply, coloc::proto::request_nonce(bytes));
        return reply;
    } catch (const std::exception& e) {
        std::cerr << "coloc-send: " << e.what() << "\n";
        return "";
    }
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
    const char* key_env = std::getenv("COLOC_SERVER_KEY");
    try {
        const std::string server_key = key_env && *key_env ? coloc::proto::read_key_file(key_env) : "";
        auto body = coloc::proto::json::parse(argv[i + 1]);
        std::string bytes = coloc::proto::seal_request(body, munge_socket, ttl_s);
        if (version > 0) {
            body["v"] = version;
            body[coloc::proto::kNonce] = coloc::proto::fresh_nonce();
            const std::string b = body.dump();
            bytes = coloc::proto::with_credential(b, coloc::proto::make_credential(b, munge_socket, ttl_s));
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));
        for (int n = 0; n < (replay ? 2 : 1); ++n) {
            std::string reply = send_once(endpoint, bytes, server_key);
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
