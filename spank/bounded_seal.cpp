#include "spank/bounded_seal.hpp"

#include <dlfcn.h>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>

#include "proto/envelope.hpp"
#include "proto/errors.hpp"

namespace coloc::spank {

namespace {

// Shared with the sealing thread, which may outlive the wait.
struct Sealing {
    std::mutex mu;
    std::condition_variable done_cv;
    bool done = false;
    std::string wire;
    std::string error;
    std::string code;
};

// Keeps this shared object mapped until the process ends, for a thread left running in it.
void pin_this_object() {
    Dl_info info{};
    if (::dladdr(reinterpret_cast<void*>(&pin_this_object), &info) == 0 || !info.dli_fname) return;
    // RTLD_NOLOAD: only a new reference to what is loaded already; RTLD_NODELETE: never unmapped.
    ::dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE);
}

}  // namespace

std::string seal_within(const nlohmann::json& body, const std::string& munge_socket, int timeout_ms) {
    auto s = std::make_shared<Sealing>();
    try {
        std::thread([s, body, munge_socket] {
            std::string wire, error, code;
            try {
                wire = proto::seal_request(body, munge_socket);
            } catch (const proto::ProtoError& e) {
                error = e.what();
                code = e.code();
            } catch (const std::exception& e) {
                error = e.what();
                code = proto::code::kInternal;
            }
            std::lock_guard<std::mutex> lock(s->mu);
            s->wire = std::move(wire);
            s->error = std::move(error);
            s->code = std::move(code);
            s->done = true;
            s->done_cv.notify_all();
        }).detach();
    } catch (const std::system_error& e) {
        throw proto::ProtoError(proto::code::kInternal, std::string("cannot start a thread for munge: ") + e.what());
    }
    std::unique_lock<std::mutex> lock(s->mu);
    if (!s->done_cv.wait_for(lock, std::chrono::milliseconds(timeout_ms), [&] { return s->done; })) {
        pin_this_object();
        throw proto::ProtoError(proto::code::kUnavailable,
                                "munged did not make a credential within " + std::to_string(timeout_ms) + " ms");
    }
    if (!s->error.empty()) throw proto::ProtoError(s->code, s->error);
    return std::move(s->wire);
}

}  // namespace coloc::spank
