// Learned profiles: solo runs give a profile's truth, or a profile of its own to a job that
// names none (model::LearnedProfiles), and colocd keeps them in its store.
#include <doctest/doctest.h>

#include <fstream>

#include "daemon/log.hpp"
#include "daemon/service/service.hpp"
#include "model/learned_profiles.hpp"
#include "proto/envelope.hpp"
#include "proto/messages.hpp"
#include "tests/unit/test_env.hpp"

using namespace coloc;
using proto::json;

namespace {

model::ProfileCatalogue catalogue_with_p1() {
    model::ProfileCatalogue c;
    model::JobProfile p;
    p.name = "p1";
    p.iter_time_s = 0.2;
    p.known["iter_time_s"] = true;
    c.intern(p);
    return c;
}

}  // namespace

TEST_CASE("learned profiles: a job's key is its catalogued profile, else its user and job name") {
    const model::ProfileCatalogue c = catalogue_with_p1();
    auto k = model::solo_key(c, "p1", "ann", "train");
    REQUIRE(k);
    CHECK(k->name == "p1");
    CHECK_FALSE(k->learned);
    k = model::solo_key(c, "", "ann", "train");
    REQUIRE(k);
    CHECK(k->name == "ann/train");
    CHECK(k->learned);
    CHECK(model::solo_key(c, "no-such-profile", "ann", "train")->name == "ann/train");
    CHECK_FALSE(model::solo_key(c, "", "ann", ""));
    CHECK_FALSE(model::solo_key(c, "", "", "train"));
}

TEST_CASE("learned profiles: solo runs become the profile's truth, one figure per job") {
    const model::ProfileCatalogue c = catalogue_with_p1();
    model::LearnedProfiles learned(c);
    const model::JobProfile& p1 = *c.find("p1");
    CHECK(learned.solo_iter_time(p1) == doctest::Approx(0.2));  // no run yet: what the catalogue says
    learned.record_iter_time({"p1", false}, 10, 0.3);
    learned.record_iter_time({"p1", false}, 11, 0.5);
    learned.record_iter_time({"p1", false}, 11, 0.4);  // job 11's later report replaces its first
    learned.record_iter_time({"p1", false}, 12, -1);   // nonsense is ignored
    REQUIRE(learned.iter_time("p1"));
    CHECK(learned.iter_time("p1")->runs == 2);
    CHECK(learned.solo_iter_time(p1) == doctest::Approx(0.35));
    CHECK(&learned.profile_for("p1", "ann", "train") == &p1);  // a catalogued profile stays itself
    CHECK_FALSE(learned.runtime("p1"));
}

TEST_CASE("learned profiles: a job without a profile gets one after its first solo run") {
    const model::ProfileCatalogue c = catalogue_with_p1();
    model::LearnedProfiles learned(c);
    CHECK(&learned.profile_for("", "ann", "train") == &c.default_profile());
    learned.record_runtime({"ann/train", true}, 20, 600);
    const model::JobProfile& mine = learned.profile_for("", "ann", "train");
    CHECK(mine.name == "ann/train");
    CHECK(mine.id == -1);  // outside the model's catalogue
    CHECK(mine.iter_time_s == doctest::Approx(c.default_profile().iter_time_s));
    CHECK(&learned.profile_for("", "bob", "train") == &c.default_profile());
    learned.record_iter_time({"ann/train", true}, 21, 0.8);
    CHECK(&learned.profile_for("", "ann", "train") == &mine);  // the same object, updated
    CHECK(mine.iter_time_s == doctest::Approx(0.8));
    CHECK(learned.solo_iter_time(mine) == doctest::Approx(0.8));

    const auto entries = learned.entries();
    REQUIRE(entries.size() == static_cast<std::size_t>(c.size()) + 1);
    CHECK(entries.front().profile->name == "default");
    CHECK(entries.back().learned);
    CHECK(entries.back().runtime->mean == doctest::Approx(600));
    CHECK(entries.back().iter_time->runs == 1);
    learned.clear();
    CHECK(&learned.profile_for("", "ann", "train") == &c.default_profile());
}

// --- in colocd -------------------------------------------------------------------------------

namespace {

const bool quiet = (daemon::set_log_level(daemon::LogLevel::Error), true);

daemon::Config config_with_p1(const std::string& db) {
    const std::string profiles = test::scratch("learned-profiles.yaml");
    std::ofstream(profiles) << "profiles:\n  - name: p1\n    iter_time_s: 0.2\n";
    daemon::Config c = daemon::parse_config(R"(listen: [ "ipc:///tmp/unused.sock" ]
partitions:
  bind: { mode: bind }
node_types:
  quad: { gpus: 4, slots_per_gpu: 2, nvlink_islands: [[0, 1], [2, 3]] }
nodes:
  - { names: "n[1-2]", type: quad, link: leaf1 }
)",
                                            "test.yaml");
    c.database = db;
    c.profiles = profiles;
    c.munge_socket = test::munge_socket();
    return c;
}

json call(daemon::Service& s, json body) {
    return json::parse(s.handle(proto::seal_request(std::move(body), test::munge_socket())));
}

json place_named(daemon::Service& s, std::int64_t job, const std::string& node, int slots, const std::string& name,
                 const std::string& profile = "") {
    proto::PlaceRequest r;
    r.job_id = job;
    r.job_uid = 1000;
    r.node = node;
    r.partition = "bind";
    r.slots = slots;
    r.job_nodes = {node};
    r.job_name = name;
    r.profile = profile;
    return call(s, r.to_json());
}

json end(daemon::Service& s, std::int64_t job, const std::string& node, int exit_status, double elapsed_s) {
    proto::EndedReport r;
    r.job_id = job;
    r.node = node;
    r.exit_status = exit_status;
    r.elapsed_s = elapsed_s;
    return call(s, r.to_json());
}

json profile_row(daemon::Service& s, const std::string& name) {
    json r = call(s, {{"op", "profiles"}});
    REQUIRE(r["ok"] == true);
    for (const json& row : r["profiles"])
        if (row["name"] == name) return row;
    return nullptr;
}

}  // namespace

TEST_CASE("colocd: solo runs teach profiles; shared, failed and unnamed runs do not; they survive a restart") {
    const std::string db = test::scratch("learned.db");
    std::string mine;
    {
        daemon::Service s(config_with_p1(db));
        // A job without a profile runs alone and ends well: its user and job name get a profile.
        REQUIRE(place_named(s, 1, "n1", 1, "train")["ok"] == true);
        CHECK(s.cluster().find(1)->profile->name == "default");
        REQUIRE(end(s, 1, "n1", 0, 120)["ok"] == true);
        json learned_rows = call(s, {{"op", "profiles"}})["profiles"];
        REQUIRE(learned_rows.back()["kind"] == "learned");
        mine = learned_rows.back()["name"];
        CHECK(mine.size() > std::string("/train").size());
        CHECK(mine.ends_with("/train"));
        CHECK(learned_rows.back()["runtime_s"] == 120.0);
        CHECK(learned_rows.back()["runtime_from"] == "learned from 1 solo run");
        CHECK(learned_rows.back()["iter_time_from"] == "default");

        // The next such job runs with it; its solo report is the profile's iteration time.
        REQUIRE(place_named(s, 2, "n1", 1, "train")["ok"] == true);
        CHECK(s.cluster().find(2)->profile->name == mine);
        REQUIRE(call(s, {{"op", "observe"}, {"job_id", 2}, {"iter_time_s", 0.7}})["ok"] == true);
        CHECK(s.cluster().find(2)->profile->iter_time_s == doctest::Approx(0.7));

        // A job that shared a GPU, one that failed and one without a name teach nothing.
        REQUIRE(place_named(s, 3, "n1", 4, "train")["ok"] == true);  // shares job 2's GPU
        REQUIRE(end(s, 3, "n1", 0, 100)["ok"] == true);
        REQUIRE(place_named(s, 4, "n2", 1, "train")["ok"] == true);
        REQUIRE(end(s, 4, "n2", 1, 90)["ok"] == true);
        REQUIRE(place_named(s, 5, "n2", 1, "")["ok"] == true);
        REQUIRE(end(s, 5, "n2", 0, 80)["ok"] == true);
        json row = profile_row(s, mine);
        CHECK(row["runtime_runs"] == 1);
        CHECK(row["iter_time_runs"] == 1);
        CHECK(call(s, {{"op", "profiles"}})["profiles"].size() == 3);  // default, p1, the learned one

        // A catalogued profile's solo report becomes the truth later reports are measured against.
        REQUIRE(place_named(s, 6, "n2", 1, "other", "p1")["ok"] == true);
        REQUIRE(call(s, {{"op", "observe"}, {"job_id", 6}, {"iter_time_s", 0.3}})["ok"] == true);
        REQUIRE(place_named(s, 7, "n2", 4, "")["ok"] == true);  // job 6 shares its GPU now
        json shared = call(s, {{"op", "observe"}, {"job_id", 6}, {"iter_time_s", 0.6}});
        REQUIRE(shared["ok"] == true);
        CHECK(shared["measured_slowdown"].get<double>() == doctest::Approx(2.0));  // 0.6 / 0.3, not 0.6 / 0.2
        row = profile_row(s, "p1");
        CHECK(row["iter_time_s"].get<double>() == doctest::Approx(0.3));
        CHECK(row["iter_time_from"] == "learned from 1 solo run");
        CHECK(profile_row(s, "default")["iter_time_from"] == "default");
    }
    daemon::Service again(config_with_p1(db));
    json row = profile_row(again, mine);
    REQUIRE(row.is_object());
    CHECK(row["runtime_s"] == 120.0);
    CHECK(row["iter_time_s"].get<double>() == doctest::Approx(0.7));
    CHECK(again.cluster().find(2)->profile->name == mine);  // a running job keeps its learned profile
    CHECK(profile_row(again, "p1")["iter_time_s"].get<double>() == doctest::Approx(0.3));
}

TEST_CASE("learned profiles: forgetting the runs leaves a learned profile readable where it was") {
    // colocd reloads its runs from the store after a failed commit; what still points at a
    // learned profile (the classes its queue was seen to ask for) must not point at freed memory.
    const model::ProfileCatalogue c = catalogue_with_p1();
    model::LearnedProfiles learned(c);
    learned.record_iter_time({"ann/train", true}, 20, 0.8);
    const model::JobProfile* before = &learned.profile_for("", "ann", "train");
    learned.clear();
    CHECK(&learned.profile_for("", "ann", "train") == &c.default_profile());  // the runs are gone
    CHECK(before->name == "ann/train");                                       // the object is not
    CHECK(before->iter_time_s == doctest::Approx(0.8));
    learned.record_iter_time({"ann/train", true}, 21, 0.9);  // reloaded: a profile again
    CHECK(learned.profile_for("", "ann", "train").iter_time_s == doctest::Approx(0.9));
}
