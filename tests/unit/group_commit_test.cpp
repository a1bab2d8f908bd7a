// Group commit: the requests of one poll round share one transaction, and a reply says ok only
// for work that is committed. Checked from a second SQLite connection, as another process
// (colocctl, a restarted colocd) would see the database.
#include <doctest/doctest.h>

#include "daemon/log.hpp"
#include "daemon/service/service.hpp"
#include "daemon/store/sqlite.hpp"
#include "proto/envelope.hpp"
#include "proto/messages.hpp"
#include "tests/unit/test_env.hpp"

using namespace coloc;
using namespace coloc::daemon;
using proto::json;

namespace {

const bool quiet = (set_log_level(LogLevel::Error), true);

Config round_config(const std::string& db) {
    Config c = parse_config(R"(listen: [ "ipc:///tmp/unused.sock" ]
default_mode: bind
node_types:
  quad: { gpus: 4, slots_per_gpu: 2 }
nodes:
  - { names: "n[1-2]", type: quad, link: leaf1 }
)",
                            "test.yaml");
    c.database = db;
    c.munge_socket = test::munge_socket();
    return c;
}

std::string place_request(std::int64_t job, const std::string& node = "n1") {
    proto::PlaceRequest r;
    r.job_id = job;
    r.job_uid = 1000;
    r.node = node;
    r.slots = 1;
    return proto::seal_request(r.to_json(), test::munge_socket());
}

std::string ended_request(std::int64_t job) {
    proto::EndedReport r;
    r.job_id = job;
    r.node = "n1";
    r.time = 1000;
    return proto::seal_request(r.to_json(), test::munge_socket());
}

std::vector<json> run_round(Service& s, const std::vector<std::string>& wires) {
    std::vector<std::string_view> views(wires.begin(), wires.end());
    std::vector<json> out;
    for (const std::string& r : s.handle_round(views)) out.push_back(json::parse(r));
    return out;
}

// What another connection sees committed.
bool stored(const std::string& db, std::int64_t job) { return Store(db).job(job).has_value(); }

}  // namespace

TEST_CASE("group commit: a round's acknowledged writes are committed when its replies are out") {
    const std::string db = test::scratch("round.db");
    Service s(round_config(db));
    auto replies = run_round(s, {place_request(1), place_request(2), place_request(3, "n9"), ended_request(1)});
    REQUIRE(replies.size() == 4);
    CHECK(replies[0]["ok"] == true);
    CHECK(replies[1]["ok"] == true);
    CHECK(replies[2]["ok"] == false);  // unknown node: refused, the rest of the round goes on
    CHECK(replies[2]["error"]["code"] == "not_found");
    CHECK(replies[3]["ok"] == true);
    CHECK(stored(db, 1));
    CHECK(stored(db, 2));
    CHECK_FALSE(stored(db, 3));
    CHECK(Store(db).job(1)->state == JobState::Ended);
    CHECK(s.cluster().job_count() == 1);  // job 2
}

TEST_CASE("group commit: when the round's commit fails, no reply says ok and memory follows the store") {
    const std::string db = test::scratch("round-fail.db");
    Service s(round_config(db));
    REQUIRE(run_round(s, {place_request(1)})[0]["ok"] == true);
    {
        // From another connection: a write for job 666 breaks a deferred constraint, which SQLite
        // checks only when the whole round commits.
        Database other(db);
        other.exec(
            "CREATE TABLE guard_parent (id INTEGER PRIMARY KEY);"
            "CREATE TABLE guard (job_id INTEGER REFERENCES guard_parent(id) DEFERRABLE INITIALLY DEFERRED);"
            "CREATE TRIGGER guard_job AFTER INSERT ON placements WHEN NEW.job_id = 666 "
            "BEGIN INSERT INTO guard VALUES (NEW.job_id); END;");
    }
    auto replies = run_round(s, {place_request(20), place_request(666), ended_request(1), place_request(21)});
    REQUIRE(replies.size() == 4);
    for (const json& r : replies) {
        CHECK(r["ok"] == false);
        CHECK(r["error"]["code"] == "internal");
    }
    for (std::int64_t job : {20, 21, 666}) CHECK_FALSE(stored(db, job));
    CHECK(Store(db).job(1)->state != JobState::Ended);
    // In memory: job 1 runs, the round's placements do not.
    CHECK(s.cluster().job_count() == 1);
    CHECK(s.cluster().find(1) != nullptr);
    CHECK(s.cluster().find(20) == nullptr);

    Database(db).exec("DROP TRIGGER guard_job");
    replies = run_round(s, {place_request(22), ended_request(1)});
    CHECK(replies[0]["ok"] == true);
    CHECK(replies[1]["ok"] == true);
    CHECK(stored(db, 22));
    CHECK(Store(db).job(1)->state == JobState::Ended);
}

TEST_CASE("sqlite: a transaction inside another is a savepoint: its rollback keeps the outer work") {
    Database db(test::scratch("savepoint.db"));
    db.exec("CREATE TABLE t (x INTEGER)");
    {
        Transaction outer(db);
        db.exec("INSERT INTO t VALUES (1)");
        {
            Transaction inner(db);
            db.exec("INSERT INTO t VALUES (2)");
        }  // not committed: rolled back to the savepoint
        {
            Transaction inner(db);
            db.exec("INSERT INTO t VALUES (3)");
            inner.commit();
        }
        outer.commit();
    }
    Statement sum(db.handle(), "SELECT group_concat(x) FROM t ORDER BY x");
    REQUIRE(sum.step());
    CHECK(sum.text(0) == "1,3");
}
