// A --coloc-profile colocd does not know runs as the default profile. colocd keeps the name as
// typed (colocctl shows "default (unknown: NAME)") and says so in the place reply, so that the
// plugin can tell the user in the job's stderr.
#include "daemon/service/service.hpp"

namespace coloc::daemon {

using proto::json;

json Service::on_place(const proto::Request& req, const proto::Identity&) {
    json reply = place_step(req);
    const auto it = req.body.find("profile");
    if (it != req.body.end() && it->is_string() && !it->get<std::string>().empty() &&
        !catalogue_.find(it->get<std::string>()))
        reply["profile_unknown"] = true;
    return reply;
}

}  // namespace coloc::daemon
