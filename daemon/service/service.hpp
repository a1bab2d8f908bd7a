// colocd's service: a router over owned parts. A round of requests is opened side by side
// (opening.hpp), each request is routed by the one table that names the role its op needs
// (service.cpp), handled by the part that owns its concern, and the round's writes are committed
// together (group_commit.hpp). The parts share what colocd knows (state.hpp) and keep their own
// state to themselves; those with work between requests are periodic() tasks of the server loop.
//   launch.hpp          place, started, ended (the plugin's reports)
//   queries.hpp         status, nodes, jobs, history, explain, metrics (colocctl's reads)
//   learning.hpp        observe, profiles; what ended jobs and solo runs teach
//   reconciliation.hpp  what Slurm says runs, against what colocd recorded
//   slot_sizing.hpp     node steering and elastic slots: what Slurm admits where
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "daemon/service/access.hpp"
#include "daemon/service/group_commit.hpp"
#include "daemon/service/launch.hpp"
#include "daemon/service/learning.hpp"
#include "daemon/service/opening.hpp"
#include "daemon/service/periodic.hpp"
#include "daemon/service/queries.hpp"
#include "daemon/service/reconciliation.hpp"
#include "daemon/service/slot_sizing.hpp"
#include "daemon/service/state.hpp"
#include "proto/auth.hpp"
#include "proto/envelope.hpp"
#include "proto/ops.hpp"

namespace coloc::daemon {

class Service {
public:
    // `job_gpus` and `job_gres` ask slurmctld for a job's GPUs and bind slots on each node
    // (daemon/service/launch.hpp); tests answer for it.
    explicit Service(Config config, slurm::JobGpusLookup::Query job_gpus = slurm::load_job_gpus,
                     slurm::JobGresLookup::Query job_gres = load_job_gres_for_colocd);

    // Handles one request's bytes and returns the reply's bytes (a round of one). Never throws.
    std::string handle(std::string_view bytes);
    // Handles the requests of one poll round, their writes in one transaction (GroupCommit),
    // and returns their replies, in order, once it has committed.
    std::vector<std::string> handle_round(const std::vector<std::string_view>& requests);
    // The same, for a server that goes on while the round's commit is synced: the round is
    // handled and committed, and its replies leave once commits().settled() says so, through
    // commits().settle().
    GroupCommit::PendingRound start_round(const std::vector<std::string_view>& requests);
    // The work between requests, in the order the server loop runs it.
    std::span<Periodic* const> periodic() const { return periodic_; }
    // On a graceful stop: a last try to store the backlog (GroupCommit::store_before_stop).
    std::size_t store_before_stop() { return commits_.store_before_stop(); }

    const place::ClusterState& cluster() const { return state_.cluster; }
    const Counters& counters() const { return state_.counters; }
    // What `colocctl metrics` and the HTTP endpoint show.
    MetricsSnapshot metrics() const { return queries_.metrics(); }
    Reconciliation& reconciliation() { return reconciliation_; }
    GroupCommit& commits() { return commits_; }
    static constexpr int kOpeners = RequestOpener::kOpeners;

    // The route table (service.cpp): every op with the role it needs. dispatch checks the role
    // before the handler runs, so handlers check only what depends on the data (whose job it is).
    using Handler = proto::json (*)(Service&, const proto::Request&, const proto::Identity&);
    struct Route {
        proto::Op op;
        Role role;  // who may send it
        Handler handler;
        const char* action = "";            // what a refused sender "may not" do
        const char* admin_field = nullptr;  // a request naming it needs an admin (steering's switch)
    };
    static std::span<const Route> routes();
    // The role a request for `route` with this body needs.
    static Role role_for(const Route& route, const proto::json& body);

private:
    static const Route kRoutes[];
    // A route's handler: the part's member function (a member of Service) for the op.
    template <auto part, auto handler>
    static proto::json to(Service& s, const proto::Request& req, const proto::Identity& who) {
        return ((s.*part).*handler)(req, who);
    }
    proto::json dispatch(Opened&& opened);  // the reply object, ok or error
    void reload_from_store();

    // The ladder of parts: each is built from those above it.
    Access access_;
    State state_;
    RequestOpener opener_{state_.cfg};
    Learning learning_{state_, access_};
    SlotSizing sizing_{state_, access_};
    Launch launch_;
    Reconciliation reconciliation_{state_};
    GroupCommit commits_{state_, [this] { reload_from_store(); }};
    Queries queries_{state_, access_, {learning_, reconciliation_, sizing_, commits_}};
    const std::vector<Periodic*> periodic_{&sizing_, &reconciliation_, &commits_};
};

}  // namespace coloc::daemon
