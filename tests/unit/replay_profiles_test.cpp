// Profiles for jobs whose log does not name one: rules from YAML, else a seeded draw; counted.
#include <doctest/doctest.h>

#include "replay/profile_rules.hpp"

using namespace coloc;
using namespace coloc::replay;

namespace {

model::ProfileCatalogue catalogue() {
    model::ProfileCatalogue c;
    for (const char* n : {"resnet50", "bert", "gpt"}) {
        model::JobProfile p;
        p.name = n;
        c.intern(p);
    }
    return c;
}

std::string rules_error(const std::string& yaml) {
    try {
        parse_profile_rules(yaml, "rules.yaml", catalogue());
    } catch (const RulesError& e) {
        return e.what();
    }
    return "";
}

TraceJob job(std::string name, std::string user, std::string profile = "") {
    TraceJob j;
    j.name = std::move(name);
    j.user = std::move(user);
    j.profile = std::move(profile);
    return j;
}

}  // namespace

TEST_CASE("rules: first match wins, all given patterns must match, otherwise") {
    auto cat = catalogue();
    ProfileRules rules = parse_profile_rules(
        "rules:\n"
        "  - name: \"^bert\"\n"
        "    user: alice\n"
        "    profile: bert\n"
        "  - name: \"(gpt|llm)\"\n"
        "    profile: gpt\n"
        "otherwise: resnet50\n",
        "rules.yaml", cat);
    Trace t;
    t.jobs = {job("bert-ft", "alice"), job("bert-ft", "bob"), job("my-llm", "bob"), job("x", "y", "gpt"),
              job("z", "y", "unknown-kind")};
    ProfileCounts counts;
    auto p = assign_profiles(t, cat, &rules, 1, counts);
    CHECK(p[0]->name == "bert");
    CHECK(p[1]->name == "resnet50");
    CHECK(p[2]->name == "gpt");
    CHECK(p[3]->name == "gpt");
    CHECK(p[4]->name == "resnet50");
    CHECK(counts.from_log == 1);
    CHECK(counts.by_rule == 2);
    CHECK(counts.per_rule == std::vector<std::size_t>{1, 1});
    CHECK(counts.by_otherwise == 2);
    CHECK(counts.drawn == 0);
    CHECK(counts.unknown_in_log.at("unknown-kind") == 1);
    CHECK(counts.per_profile.at("resnet50") == 2);
}

TEST_CASE("draws: seeded, per job, from the named profiles") {
    auto cat = catalogue();
    Trace t;
    for (int i = 0; i < 300; ++i) t.jobs.push_back(job("j", "u"));
    ProfileCounts a, b, c;
    auto pa = assign_profiles(t, cat, nullptr, 42, a);
    auto pb = assign_profiles(t, cat, nullptr, 42, b);
    auto pc = assign_profiles(t, cat, nullptr, 43, c);
    CHECK(pa == pb);
    CHECK(pa != pc);
    CHECK(a.drawn == 300);
    CHECK(a.per_profile.size() == 3);  // never the built-in default while others exist
    CHECK_FALSE(a.per_profile.count("default"));
}

TEST_CASE("a model family named in the log draws among that family's profiles") {
    model::ProfileCatalogue cat;
    for (const char* n : {"resnet50-b32", "resnet50-b64", "bert-base"}) {
        model::JobProfile p;
        p.name = n;
        p.family = std::string(n).substr(0, std::string(n).find('-'));
        cat.intern(p);
    }
    Trace t;
    for (int i = 0; i < 50; ++i) t.jobs.push_back(job("x", "u", "resnet50"));
    t.jobs.push_back(job("y", "u", "vgg19"));
    ProfileCounts counts;
    auto p = assign_profiles(t, cat, nullptr, 9, counts);
    for (int i = 0; i < 50; ++i) CHECK(p[static_cast<std::size_t>(i)]->family == "resnet50");
    CHECK(counts.by_family == 50);
    CHECK(counts.per_profile.count("resnet50-b32"));
    CHECK(counts.per_profile.count("resnet50-b64"));
    CHECK(counts.drawn == 1);
    CHECK(counts.unknown_in_log.at("vgg19") == 1);
}

TEST_CASE("rules files: errors name file, line and key") {
    CHECK(rules_error("rules:\n  - name: x\n    profile: nope\n")
              .find("rules.yaml:3: key 'rules[0].profile': profile 'nope'") == 0);
    CHECK(rules_error("rules:\n  - name: \"(\"\n    profile: bert\n").find("rules.yaml:2: key 'rules[0].name'") == 0);
    CHECK(rules_error("rules:\n  - profile: bert\n").find("give at least one of name, user, partition") !=
          std::string::npos);
    CHECK(rules_error("rule:\n  - name: x\n").find("unknown key") != std::string::npos);
    CHECK(rules_error("rules:\n  - name: x\n    profile: bert\n    host: y\n")
              .find("rules.yaml:4: key 'rules[0].host'") == 0);
    CHECK(rules_error("otherwise: draw\n").empty());
}
