#include "replay/profile_rules.hpp"

#include "base/files.hpp"

#include <regex.h>
#include <yaml-cpp/yaml.h>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace coloc::replay {

namespace {

std::string where(const std::string& source, const YAML::Node& n) {
    return source + (n.Mark().line >= 0 ? ":" + std::to_string(n.Mark().line + 1) : "");
}

std::uint64_t mix(std::uint64_t x) {
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

}  // namespace

Pattern::Pattern(const std::string& text) : text_(text) {
    if (text.empty()) return;
    auto* re = new regex_t;
    int rc = regcomp(re, text.c_str(), REG_EXTENDED | REG_NOSUB);
    if (rc != 0) {
        char why[256];
        regerror(rc, re, why, sizeof why);
        delete re;
        throw std::invalid_argument(why);
    }
    re_ = std::shared_ptr<void>(re, [](void* p) {
        regfree(static_cast<regex_t*>(p));
        delete static_cast<regex_t*>(p);
    });
}

bool Pattern::matches(const std::string& s) const {
    return !re_ || regexec(static_cast<const regex_t*>(re_.get()), s.c_str(), 0, nullptr, 0) == 0;
}

ProfileRules parse_profile_rules(const std::string& text, const std::string& source,
                                 const model::ProfileCatalogue& catalogue) {
    YAML::Node root;
    try {
        root = YAML::Load(text);
    } catch (const YAML::ParserException& e) {
        throw RulesError(source + ":" + std::to_string(e.mark.line + 1) + ": " + e.msg);
    }
    ProfileRules out;
    if (!root.IsMap()) throw RulesError(source + ": expected a mapping with `rules:` and `otherwise:`");
    for (const auto& kv : root) {
        auto key = kv.first.as<std::string>();
        if (key != "rules" && key != "otherwise")
            throw RulesError(where(source, kv.first) + ": key '" + key + "': unknown key (known: otherwise, rules)");
    }
    auto check_profile = [&](const YAML::Node& n, const std::string& key) {
        if (!n.IsScalar()) throw RulesError(where(source, n) + ": key '" + key + "': expected a profile name");
        std::string name = n.as<std::string>();
        if (!catalogue.find(name))
            throw RulesError(where(source, n) + ": key '" + key + "': profile '" + name + "' is not in the catalogue");
        return name;
    };
    if (root["otherwise"]) {
        const YAML::Node& o = root["otherwise"];
        if (o.IsScalar() && o.as<std::string>() == "draw")
            out.otherwise = "draw";
        else
            out.otherwise = check_profile(o, "otherwise");
    }
    if (root["rules"]) {
        const YAML::Node& rules = root["rules"];
        if (!rules.IsSequence()) throw RulesError(where(source, rules) + ": key 'rules': expected a list of rules");
        int i = 0;
        for (const auto& r : rules) {
            std::string key = "rules[" + std::to_string(i++) + "]";
            if (!r.IsMap()) throw RulesError(where(source, r) + ": key '" + key + "': expected a mapping");
            ProfileRule rule;
            rule.line = r.Mark().line + 1;
            for (const auto& kv : r) {
                auto k = kv.first.as<std::string>();
                if (k == "profile") {
                    rule.profile = check_profile(kv.second, key + ".profile");
                    continue;
                }
                Pattern* pattern = k == "name"        ? &rule.name
                                   : k == "user"      ? &rule.user
                                   : k == "partition" ? &rule.partition
                                                      : nullptr;
                if (!pattern)
                    throw RulesError(where(source, kv.first) + ": key '" + key + "." + k +
                                     "': unknown key (known: name, partition, profile, user)");
                if (!kv.second.IsScalar())
                    throw RulesError(where(source, kv.second) + ": key '" + key + "." + k + "': expected a pattern");
                const std::string text = kv.second.as<std::string>();
                try {
                    *pattern = Pattern(text);
                } catch (const std::invalid_argument& e) {
                    throw RulesError(where(source, kv.second) + ": key '" + key + "." + k + "': '" + text +
                                     "' is not a regular expression (" + e.what() + ")");
                }
            }
            if (rule.profile.empty()) throw RulesError(where(source, r) + ": key '" + key + ".profile': missing");
            if (rule.name.empty() && rule.user.empty() && rule.partition.empty())
                throw RulesError(where(source, r) + ": key '" + key + "': give at least one of name, user, partition");
            out.rules.push_back(std::move(rule));
        }
    }
    return out;
}

ProfileRules load_profile_rules(const std::string& path, const model::ProfileCatalogue& catalogue) {
    std::ifstream in;
    if (auto why = base::open_for_reading(in, path); !why.empty()) throw RulesError(path + ": " + why);
    std::stringstream text;
    text << in.rdbuf();
    return parse_profile_rules(text.str(), path, catalogue);
}

std::vector<const model::JobProfile*> assign_profiles(const Trace& trace, const model::ProfileCatalogue& catalogue,
                                                      const ProfileRules* rules, std::uint64_t seed,
                                                      ProfileCounts& counts) {
    counts = {};
    if (rules) counts.per_rule.assign(rules->rules.size(), 0);
    // Drawn from the named profiles; the built-in default only when there is nothing else.
    std::vector<const model::JobProfile*> pool;
    for (const auto& p : catalogue.profiles())
        if (p.name != model::ProfileCatalogue::kDefaultName) pool.push_back(&p);
    if (pool.empty()) pool.push_back(&catalogue.default_profile());

    std::map<std::string, std::vector<const model::JobProfile*>> families;
    for (const auto& p : catalogue.profiles())
        if (!p.family.empty()) families[p.family].push_back(&p);

    std::vector<const model::JobProfile*> out;
    out.reserve(trace.jobs.size());
    for (std::size_t i = 0; i < trace.jobs.size(); ++i) {
        const TraceJob& job = trace.jobs[i];
        const model::JobProfile* p = nullptr;
        if (!job.profile.empty()) {
            p = catalogue.find(job.profile);
            if (p) {
                ++counts.from_log;
            } else {
                auto family = families.find(job.profile);
                if (family != families.end()) {
                    p = family->second[mix(seed * 0x100000001b3ULL + i) % family->second.size()];
                    ++counts.by_family;
                } else {
                    ++counts.unknown_in_log[job.profile];
                }
            }
        }
        if (!p && rules) {
            for (std::size_t r = 0; r < rules->rules.size() && !p; ++r) {
                const ProfileRule& rule = rules->rules[r];
                if (rule.name.matches(job.name) && rule.user.matches(job.user) &&
                    rule.partition.matches(job.partition)) {
                    p = catalogue.find(rule.profile);
                    ++counts.by_rule;
                    ++counts.per_rule[r];
                }
            }
            if (!p && rules->otherwise != "draw") {
                p = catalogue.find(rules->otherwise);
                ++counts.by_otherwise;
            }
        }
        if (!p) {
            p = pool[mix(seed * 0x100000001b3ULL + i) % pool.size()];
            ++counts.drawn;
        }
        ++counts.per_profile[p->name];
        out.push_back(p);
    }
    return out;
}

}  // namespace coloc::replay
