#include "spank/net_call.hpp"

#include <dlfcn.h>
#include <cstdlib>
#include <memory>

#include "proto/errors.hpp"

namespace coloc::spank {

namespace {

using CallFn = int (*)(const char*, const char*, const char*, const char*, int, double*, char**, char**, char**);

// spank_coloc_net.so in the directory of the object this code is in.
std::string net_object_path() {
    Dl_info info{};
    if (::dladdr(reinterpret_cast<void*>(&net_object_path), &info) == 0 || !info.dli_fname) return "spank_coloc_net.so";
    std::string self = info.dli_fname;
    const auto slash = self.rfind('/');
    return (slash == std::string::npos ? std::string() : self.substr(0, slash + 1)) + "spank_coloc_net.so";
}

CallFn load_call() {
    static CallFn fn = nullptr;
    if (fn) return fn;
    const std::string path = net_object_path();
    // RTLD_NODELETE: a munge thread left waiting may still run in it after the call.
    void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
    if (!handle) {
        const char* why = ::dlerror();
        throw proto::ProtoError(proto::code::kInternal, "cannot load " + path + ": " + (why ? why : "unknown error"));
    }
    fn = reinterpret_cast<CallFn>(::dlsym(handle, "coloc_net_call"));
    if (!fn) throw proto::ProtoError(proto::code::kInternal, path + " has no coloc_net_call");
    return fn;
}

}  // namespace

nlohmann::json net_call(const std::string& endpoint, const nlohmann::json& body, const proto::CallOptions& options) {
    CallFn call = load_call();
    char* reply = nullptr;
    char* code = nullptr;
    char* message = nullptr;
    const int rc = call(endpoint.c_str(), body.dump().c_str(), options.munge_socket.c_str(), options.server_key.c_str(),
                        options.timeout_ms, options.munge_ms, &reply, &code, &message);
    std::unique_ptr<char, decltype(&std::free)> r(reply, &std::free), c(code, &std::free), m(message, &std::free);
    if (rc != 0) throw proto::ProtoError(c ? c.get() : proto::code::kInternal, m ? m.get() : "colocd call failed");
    if (!r) throw proto::ProtoError(proto::code::kInternal, "colocd call gave no reply");
    return nlohmann::json::parse(r.get());
}

}  // namespace coloc::spank
