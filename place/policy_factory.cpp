#include "place/policy_factory.hpp"

#include <stdexcept>

#include "place/simple_policies.hpp"

namespace coloc::place {

namespace {

std::string known_list(const std::vector<std::string>& known = policy_names()) {
    std::string out;
    for (const auto& n : known) out += (out.empty() ? "" : ", ") + n;
    return out;
}

}  // namespace

const std::vector<std::string>& policy_names() {
    static const std::vector<std::string> names = {"exclusive", "slurm", "pack", "spread", "coloc"};
    return names;
}

std::unique_ptr<Policy> make_policy(const std::string& name, const model::InterferenceModel* model,
                                    const ColocOptions& coloc) {
    if (const NamedRule* rule = find_simple_rule(name)) return std::make_unique<SimplePolicy>(*rule, model);
    if (name == "coloc") {
        if (!model) throw std::invalid_argument("policy 'coloc' needs an interference model");
        return std::make_unique<ColocPolicy>(*model, coloc);
    }
    throw std::invalid_argument("unknown policy '" + name + "' (known: " + known_list() + ")");
}

std::vector<std::string> parse_policy_list(const std::string& list, const std::vector<std::string>& known_names) {
    std::vector<std::string> out;
    std::size_t start = 0;
    while (start <= list.size()) {
        std::size_t comma = list.find(',', start);
        std::string name = list.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
        while (!name.empty() && name.front() == ' ') name.erase(name.begin());
        while (!name.empty() && name.back() == ' ') name.pop_back();
        if (name.empty())
            throw std::invalid_argument("empty policy name in '" + list + "' (known: " + known_list(known_names) + ")");
        bool known = false;
        for (const auto& n : known_names) known = known || n == name;
        if (!known)
            throw std::invalid_argument("unknown policy '" + name + "' (known: " + known_list(known_names) + ")");
        for (const auto& seen : out)
            if (seen == name) throw std::invalid_argument("policy '" + name + "' is listed twice");
        out.push_back(name);
        if (comma == std::string::npos) break;
        start = comma + 1;
    }
    return out;
}

}  // namespace coloc::place
