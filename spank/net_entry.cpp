#include "spank/net_entry.hpp"

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <nlohmann/json.hpp>

#include "proto/client.hpp"
#include "proto/errors.hpp"
#include "spank/bounded_seal.hpp"

namespace {

char* copy(const std::string& s) {
    char* out = static_cast<char*>(std::malloc(s.size() + 1));
    if (out) std::memcpy(out, s.c_str(), s.size() + 1);
    return out;
}

}  // namespace

extern "C" int coloc_net_call(const char* endpoint, const char* body, const char* munge_socket, const char* server_key,
                              int timeout_ms, double* munge_ms, char** reply, char** code, char** message) {
    using namespace coloc;
    *reply = *code = *message = nullptr;
    try {
        // munge on a thread of its own, bounded; ZeroMQ by its own timeouts.
        const auto t0 = std::chrono::steady_clock::now();
        const std::string wire = spank::seal_within(nlohmann::json::parse(body), munge_socket, timeout_ms);
        const double took = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
        if (munge_ms) *munge_ms = took;
        const int left = timeout_ms - static_cast<int>(took);
        if (left <= 0)
            throw proto::ProtoError(proto::code::kUnavailable, "no time left after making the munge credential");
        *reply = copy(proto::call_sealed(endpoint, wire, {munge_socket, left, nullptr, server_key}).dump());
        return 0;
    } catch (const proto::ProtoError& e) {
        *code = copy(e.code());
        *message = copy(e.what());
    } catch (const std::exception& e) {
        *code = copy(proto::code::kInternal);
        *message = copy(e.what());
    } catch (...) {
        *code = copy(proto::code::kInternal);
        *message = copy("unexpected failure");
    }
    return 1;
}
