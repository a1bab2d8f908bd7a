#include "model/io/profiles_yaml.hpp"
#include "base/files.hpp"

#include <yaml-cpp/yaml.h>

#include <cmath>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

namespace coloc::model::io {

namespace {
struct Ctx {
    const std::string& source;
    [[noreturn]] void fail(const YAML::Node& at, const std::string& key, const std::string& what) const {
        const int line = at.Mark().is_null() ? 0 : at.Mark().line + 1;
        throw ProfileError(source + ":" + std::to_string(line) + ": " + (key.empty() ? "" : "key '" + key + "': ") +
                           what);
    }
};

double number(const Ctx& c, const YAML::Node& n, const std::string& key, double lo, double hi) {
    double v = 0;
    try {
        if (!n.IsScalar()) c.fail(n, key, "expected a number");
        v = n.as<double>();
    } catch (const YAML::Exception&) {
        c.fail(n, key, "expected a number, got '" + n.Scalar() + "'");
    }
    if (!std::isfinite(v) || v < lo || v > hi) {
        std::ostringstream o;
        o << "value " << v << " out of range [" << lo << ", " << hi << "]";
        c.fail(n, key, o.str());
    }
    return v;
}

std::string text(const Ctx& c, const YAML::Node& n, const std::string& key) {
    if (!n.IsScalar() || n.Scalar().empty()) c.fail(n, key, "expected a non-empty string");
    return n.Scalar();
}

int integer(const Ctx& c, const YAML::Node& n, const std::string& key, int lo, int hi) {
    const double v = number(c, n, key, lo, hi);
    if (v != std::floor(v)) c.fail(n, key, "expected a whole number");
    return static_cast<int>(v);
}

JobProfile profile(const Ctx& c, const YAML::Node& n) {
    if (!n.IsMap()) c.fail(n, "", "a profile must be a mapping");
    JobProfile p;
    if (!n["name"]) c.fail(n, "name", "missing");
    constexpr double kBig = 1e12;
    for (const auto& kv : n) {
        const std::string key = kv.first.as<std::string>();
        const YAML::Node& v = kv.second;
        if (key == "name")
            p.name = text(c, v, key);
        else if (key == "family")
            p.family = text(c, v, key);
        else if (key == "description") {
            text(c, v, key);
            continue;
        } else if (key == "batch_size")
            p.batch_size = number(c, v, key, 0, kBig);
        else if (key == "iter_time_s") {
            p.iter_time_s = number(c, v, key, 0, kBig);
            if (p.iter_time_s <= 0) c.fail(v, key, "must be > 0");
        } else if (key == "runtime_s") {
            p.runtime_s = number(c, v, key, 0, kBig);
            if (p.runtime_s <= 0) c.fail(v, key, "must be > 0");
        } else if (key == "gpus")
            p.gpus = integer(c, v, key, 1, 1 << 20);
        else if (key == "nodes")
            p.nodes = integer(c, v, key, 1, 1 << 20);
        else if (key == "sm_util")
            p.sm_util = number(c, v, key, 0, 1);
        else if (key == "mem_bw_util")
            p.mem_bw_util = number(c, v, key, 0, 1);
        else if (key == "gpu_mem_gb")
            p.gpu_mem_gb = number(c, v, key, 0, kBig);
        else if (key == "host_pressure")
            p.host_pressure = number(c, v, key, 0, 1);
        else if (key == "comm_bytes")
            p.comm_bytes = number(c, v, key, 0, kBig);
        else if (key == "comm_fraction")
            p.comm_fraction = number(c, v, key, 0, 1);
        else if (key == "comm_period_s")
            p.comm_period_s = number(c, v, key, 0, kBig);
        else if (key == "solo_throughput") {
            if (!v.IsMap()) c.fail(v, key, "expected a mapping of GPU type to iterations per second");
            for (const auto& g : v)
                p.solo_throughput[text(c, g.first, key)] = number(c, g.second, key + "." + g.first.Scalar(), 0, kBig);
        } else
            c.fail(kv.first, key, "unknown profile field");
        p.known[key] = true;
    }
    return p;
}

void pairs(const Ctx& c, const YAML::Node& n, ProfileCatalogue& cat) {
    if (!n.IsMap()) c.fail(n, "pairs", "expected {gpu_type: {job: {neighbour: speed}}}");
    for (const auto& g : n) {
        const std::string gpu = text(c, g.first, "pairs");
        if (!g.second.IsMap()) c.fail(g.second, "pairs." + gpu, "expected {job: {neighbour: speed}}");
        for (const auto& j : g.second) {
            const std::string job = text(c, j.first, "pairs." + gpu);
            if (!cat.find(job)) c.fail(j.first, "pairs." + gpu + "." + job, "no such profile");
            if (!j.second.IsMap()) c.fail(j.second, "pairs." + gpu + "." + job, "expected {neighbour: speed}");
            for (const auto& nb : j.second) {
                const std::string other = text(c, nb.first, "pairs." + gpu + "." + job);
                const std::string key = "pairs." + gpu + "." + job + "." + other;
                if (!cat.find(other)) c.fail(nb.first, key, "no such profile");
                const double s = number(c, nb.second, key, -1e300, 1e300);
                if (auto why = pair_speed_problem(s); !why.empty()) c.fail(nb.second, key, why);
                cat.add_pair(MeasuredPair{job, other, gpu, s});
            }
        }
    }
}
}  // namespace

ProfileCatalogue parse_profiles_yaml(const std::string& text_in, const std::string& source) {
    const Ctx c{source};
    YAML::Node root;
    try {
        root = YAML::Load(text_in);
    } catch (const YAML::ParserException& e) {
        throw ProfileError(source + ":" + std::to_string(e.mark.line + 1) + ": " + e.msg);
    }
    if (!root.IsMap()) c.fail(root, "", "expected a mapping with 'profiles'");
    for (const auto& kv : root) {
        const std::string key = kv.first.as<std::string>();
        if (key != "profiles" && key != "pairs")
            c.fail(kv.first, key, "unknown top-level key (expected profiles, pairs)");
    }
    const YAML::Node list = root["profiles"];
    if (!list) c.fail(root, "profiles", "missing");
    if (!list.IsSequence()) c.fail(list, "profiles", "expected a list of profiles");
    ProfileCatalogue cat;
    std::set<std::string> seen;
    for (const auto& n : list) {
        JobProfile p = profile(c, n);
        if (!seen.insert(p.name).second) c.fail(n["name"], "name", "duplicate profile '" + p.name + "'");
        cat.intern(std::move(p));
    }
    if (root["pairs"]) pairs(c, root["pairs"], cat);
    return cat;
}

ProfileCatalogue load_profiles_yaml(const std::string& path) {
    std::ifstream in;
    if (auto why = base::open_for_reading(in, path); !why.empty()) throw ProfileError(path + ": " + why);
    std::stringstream ss;
    ss << in.rdbuf();
    return parse_profiles_yaml(ss.str(), path);
}

void write_profiles_yaml(std::ostream& out, const ProfileCatalogue& cat) {
    YAML::Emitter e;
    e.SetDoublePrecision(6);  // measurements carry no more; keeps the file readable
    e << YAML::BeginMap << YAML::Key << "profiles" << YAML::Value << YAML::BeginSeq;
    for (const JobProfile& p : cat.profiles()) {
        if (p.name == ProfileCatalogue::kDefaultName && p.known.empty()) continue;  // built in
        e << YAML::BeginMap << YAML::Key << "name" << YAML::Value << p.name;
        if (p.has("family")) e << YAML::Key << "family" << YAML::Value << p.family;
        auto num = [&](const char* key, double v) {
            if (p.has(key)) e << YAML::Key << key << YAML::Value << v;
        };
        num("batch_size", p.batch_size);
        num("iter_time_s", p.iter_time_s);
        num("runtime_s", p.runtime_s);
        if (p.has("gpus")) e << YAML::Key << "gpus" << YAML::Value << p.gpus;
        if (p.has("nodes")) e << YAML::Key << "nodes" << YAML::Value << p.nodes;
        num("sm_util", p.sm_util);
        num("mem_bw_util", p.mem_bw_util);
        num("gpu_mem_gb", p.gpu_mem_gb);
        num("host_pressure", p.host_pressure);
        num("comm_bytes", p.comm_bytes);
        num("comm_fraction", p.comm_fraction);
        num("comm_period_s", p.comm_period_s);
        if (!p.solo_throughput.empty()) {
            e << YAML::Key << "solo_throughput" << YAML::Value << YAML::Flow << YAML::BeginMap;
            for (const auto& [g, v] : p.solo_throughput) e << YAML::Key << g << YAML::Value << v;
            e << YAML::EndMap;
        }
        e << YAML::EndMap;
    }
    e << YAML::EndSeq;
    if (!cat.pairs().empty()) {
        std::map<std::string, std::map<std::string, std::map<std::string, double>>> by;
        for (const MeasuredPair& m : cat.pairs()) by[m.gpu_type][m.job][m.neighbour] = m.speed;
        e << YAML::Key << "pairs" << YAML::Value << YAML::BeginMap;
        for (const auto& [g, jobs] : by) {
            e << YAML::Key << g << YAML::Value << YAML::BeginMap;
            for (const auto& [j, nbs] : jobs) {
                e << YAML::Key << j << YAML::Value << YAML::Flow << YAML::BeginMap;
                for (const auto& [nb, s] : nbs) e << YAML::Key << nb << YAML::Value << std::round(s * 10000) / 10000;
                e << YAML::EndMap;
            }
            e << YAML::EndMap;
        }
        e << YAML::EndMap;
    }
    e << YAML::EndMap;
    out << e.c_str() << "\n";
}

}  // namespace coloc::model::io
