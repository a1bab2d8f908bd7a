// Which profile a job gets when its log does not say: rules in a YAML file that match the job's
// name, user or partition (POSIX extended regular expressions, all given must match; the first
// rule that matches wins), else a seeded draw from the catalogue. The counts say how many jobs
// got which.
//
//   rules:
//     - name: "^(bert|gpt)"      # searched anywhere in the job name
//       profile: transformer-large
//     - user: "^alice$"
//       partition: "a100"
//       profile: resnet50
//   otherwise: draw              # or a profile name
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "model/catalogue.hpp"
#include "replay/trace.hpp"

namespace coloc::replay {

// A POSIX extended regular expression (regcomp), searched anywhere in a string; empty matches all.
class Pattern {
public:
    Pattern() = default;
    explicit Pattern(const std::string& text);  // throws std::invalid_argument saying why
    bool matches(const std::string& s) const;
    const std::string& text() const { return text_; }
    bool empty() const { return text_.empty(); }

private:
    std::string text_;
    std::shared_ptr<void> re_;  // regex_t, freed with regfree
};

struct ProfileRule {
    Pattern name, user, partition;
    std::string profile;
    int line = 0;
};

struct ProfileRules {
    std::vector<ProfileRule> rules;
    std::string otherwise = "draw";  // "draw" or a profile name
};

class RulesError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// Throws RulesError naming the file, line and key; every profile named must be in `catalogue`.
ProfileRules parse_profile_rules(const std::string& text, const std::string& source,
                                 const model::ProfileCatalogue& catalogue);
ProfileRules load_profile_rules(const std::string& path, const model::ProfileCatalogue& catalogue);

struct ProfileCounts {
    std::size_t from_log = 0;   // the log named a profile the catalogue has
    std::size_t by_family = 0;  // the log named a model family the catalogue has
    std::size_t by_rule = 0;
    std::vector<std::size_t> per_rule;  // by rule index
    std::size_t by_otherwise = 0;       // the rules' `otherwise` profile
    std::size_t drawn = 0;
    std::map<std::string, std::size_t> unknown_in_log;  // named in the log, not in the catalogue
    std::map<std::string, std::size_t> per_profile;
};

// The profile of every job (catalogue references) and the counts, in this order: the profile the
// log names; when the log names a model family instead (Tiresias' "resnet50"), a seeded draw
// among the catalogue's profiles of that family; the rules (may be null); a seeded draw from
// the whole catalogue. A draw depends only on the seed and the job's position in the trace.
std::vector<const model::JobProfile*> assign_profiles(const Trace& trace, const model::ProfileCatalogue& catalogue,
                                                      const ProfileRules* rules, std::uint64_t seed,
                                                      ProfileCounts& counts);

}  // namespace coloc::replay
