// The profile catalogue and its YAML file.
#include <doctest/doctest.h>

#include <sstream>

#include "model/catalogue.hpp"
#include "model/io/profiles_yaml.hpp"

using namespace coloc::model;
using coloc::model::io::parse_profiles_yaml;
using coloc::model::io::ProfileError;

namespace {
std::string error_of(const std::string& yaml) {
    try {
        parse_profiles_yaml(yaml, "cat.yaml");
    } catch (const ProfileError& e) {
        return e.what();
    }
    return "";
}
}  // namespace

TEST_CASE("interning gives stable ids; re-interning a name replaces it in place") {
    ProfileCatalogue cat;
    CHECK(cat.size() == 1);
    CHECK(cat.default_profile().name == "default");
    JobProfile p;
    p.name = "bert";
    const int id = cat.intern(p);
    const JobProfile* first = cat.find("bert");
    p.iter_time_s = 0.5;
    CHECK(cat.intern(p) == id);
    CHECK(cat.find("bert") == first);
    CHECK(first->iter_time_s == 0.5);
    CHECK(first->id == id);
    CHECK(&cat.lookup("nope") == &cat.default_profile());
    CHECK(&cat.lookup("") == &cat.default_profile());
    CHECK(&cat.lookup("bert") == first);
}

TEST_CASE("the YAML catalogue: given features are known, the rest keep their defaults") {
    const auto cat = parse_profiles_yaml(R"(profiles:
  - name: resnet50-b32
    family: resnet50
    batch_size: 32
    sm_util: 0.9
    solo_throughput: {k80: 1.2, v100: 7.9}
  - name: gpt-2node
    nodes: 2
    gpus: 8
    comm_fraction: 0.35
pairs:
  v100:
    resnet50-b32: {resnet50-b32: 0.45, gpt-2node: 0.3}
)",
                                         "cat.yaml");
    const JobProfile* r = cat.find("resnet50-b32");
    REQUIRE(r);
    CHECK(r->sm_util == 0.9);
    CHECK(r->has("sm_util"));
    CHECK_FALSE(r->has("mem_bw_util"));
    CHECK(r->mem_bw_util == 0.4);
    CHECK(r->solo_throughput.at("v100") == 7.9);
    const JobProfile* g = cat.find("gpt-2node");
    REQUIRE(g);
    CHECK(g->nodes == 2);
    CHECK(g->gpus == 8);
    CHECK(g->iter_time_s == 0.25);
    CHECK(cat.pairs().size() == 2);
}

TEST_CASE("catalogue errors name the file, the line and the key") {
    CHECK(error_of("profiles:\n  - name: a\n    sm_util: 1.5\n") ==
          "cat.yaml:3: key 'sm_util': value 1.5 out of range [0, 1]");
    CHECK(error_of("profiles:\n  - name: a\n    gpus: 2\n    speed: 3\n") ==
          "cat.yaml:4: key 'speed': unknown profile field");
    CHECK(error_of("profiles:\n  - name: a\n    iter_time_s: fast\n") ==
          "cat.yaml:3: key 'iter_time_s': expected a number, got 'fast'");
    CHECK(error_of("profiles:\n  - name: a\n  - name: a\n") == "cat.yaml:3: key 'name': duplicate profile 'a'");
    CHECK(error_of("profiles:\n  - family: x\n") == "cat.yaml:2: key 'name': missing");
    CHECK(error_of("profiles:\n  - name: a\n    gpus: 1.5\n") == "cat.yaml:3: key 'gpus': expected a whole number");
    CHECK(error_of("profiles:\n  - name: a\npairs:\n  v100:\n    a: {b: 0.5}\n") ==
          "cat.yaml:5: key 'pairs.v100.a.b': no such profile");
    CHECK(error_of("profile:\n  - name: a\n") ==
          "cat.yaml:1: key 'profile': unknown top-level key (expected profiles, pairs)");
    CHECK(error_of("profiles: [\n").rfind("cat.yaml:", 0) == 0);
}

TEST_CASE("written catalogues read back the same") {
    const auto cat = parse_profiles_yaml(R"(profiles:
  - name: lm-b20
    family: lm
    batch_size: 20
    comm_fraction: 0.1
    solo_throughput: {p100: 58.8}
pairs:
  p100:
    lm-b20: {lm-b20: 0.49}
)",
                                         "in.yaml");
    std::ostringstream out;
    coloc::model::io::write_profiles_yaml(out, cat);
    const auto again = parse_profiles_yaml(out.str(), "out.yaml");
    const JobProfile* p = again.find("lm-b20");
    REQUIRE(p);
    CHECK(p->family == "lm");
    CHECK(p->comm_fraction == 0.1);
    CHECK(p->has("comm_fraction"));
    CHECK_FALSE(p->has("sm_util"));
    CHECK(p->solo_throughput.at("p100") == 58.8);
    REQUIRE(again.pairs().size() == 1);
    CHECK(again.pairs()[0].speed == doctest::Approx(0.49));
}
