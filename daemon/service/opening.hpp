// Opening a round's requests before any handler runs: the envelope (proto/envelope.hpp), the op
// (known or not), the cluster it names, and the munge credential. Opening reads nothing but the
// configuration, so the requests of a round are opened side by side (each credential check is a
// round trip to munged); handlers then run one at a time.
#pragma once

#include <optional>
#include <string_view>
#include <vector>

#include "config/config.hpp"
#include "daemon/worker_pool.hpp"
#include "proto/auth.hpp"
#include "proto/envelope.hpp"
#include "proto/errors.hpp"
#include "proto/ops.hpp"

namespace coloc::daemon {

// A request with its envelope opened and its credential checked, ready for its handler.
struct Opened {
    proto::Request req;
    proto::Identity who;
    std::optional<proto::Op> op;
    std::optional<proto::ProtoError> refused;  // set: answered with this error
    bool bad_credential = false;               // refused for its credential (auth_refused)
    std::string nonce;                         // the reply echoes it; empty when it has none
    double seconds = 0;                        // spent opening
};

class RequestOpener {
public:
    // Credential checks of one round at once, besides the serving thread's own.
    static constexpr int kOpeners = 3;

    explicit RequestOpener(const Config& cfg) : cfg_(cfg) {}
    // Every request of a round, in order. Never throws.
    std::vector<Opened> open_all(const std::vector<std::string_view>& requests);

private:
    Opened open(std::string_view bytes) const;
    // Refuses a request naming a cluster other than colocd.yaml's `cluster:` (wrong_cluster).
    void check_cluster(const proto::json& body) const;

    const Config& cfg_;
    WorkerPool pool_{kOpeners};
};

}  // namespace coloc::daemon
