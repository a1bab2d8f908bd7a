#include "daemon/service/opening.hpp"

#include <chrono>
#include <string>

namespace coloc::daemon {

using proto::json;
using proto::ProtoError;
namespace code = proto::code;

std::vector<Opened> RequestOpener::open_all(const std::vector<std::string_view>& requests) {
    std::vector<Opened> opened(requests.size());
    pool_.for_each(requests.size(), [&](std::size_t i) { opened[i] = open(requests[i]); });
    return opened;
}

Opened RequestOpener::open(std::string_view bytes) const {
    const auto t0 = std::chrono::steady_clock::now();
    Opened o;
    try {
        o.req = proto::open_request(bytes);
        o.nonce = proto::nonce_of(o.req.body);  // read once, here, for the reply
        o.op = proto::op_from_name(o.req.op);
        if (!o.op) throw ProtoError(code::kUnknownOp, "unknown op '" + o.req.op + "'");
        check_cluster(o.req.body);
        if (o.req.cred.empty()) {
            o.bad_credential = true;
            throw ProtoError(code::kAuthMissing, "request carries no munge credential");
        }
        try {
            o.who = proto::verify_credential(o.req.cred, o.req.canonical, cfg_.munge_socket, cfg_.credential_max_age_s);
        } catch (const ProtoError&) {
            o.bad_credential = true;
            throw;
        }
    } catch (const ProtoError& e) {
        o.refused = e;
    } catch (const std::exception& e) {
        o.refused = ProtoError(code::kInternal, e.what());
    }
    // A request refused before it was read whole still has its nonce echoed, where it has one.
    if (o.refused && o.req.body.is_null()) o.nonce = proto::request_nonce(bytes);
    o.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return o;
}

void RequestOpener::check_cluster(const json& body) const {
    const auto it = body.find("cluster");
    if (it == body.end()) return;  // senders that name none (older ones, one-cluster sites) are served
    if (!it->is_string()) throw ProtoError(code::kBadField, "field 'cluster': expected a cluster name");
    if (cfg_.cluster.empty() || *it == cfg_.cluster) return;
    throw ProtoError(code::kWrongCluster, "this colocd serves cluster '" + cfg_.cluster + "', not '" +
                                              it->get<std::string>() + "': ask the colocd of that cluster");
}

}  // namespace coloc::daemon
