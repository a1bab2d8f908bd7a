// Reads colocd.yaml's values out of YAML nodes, naming the file, the line and the key in every
// error. Shared by the files that read parts of colocd.yaml.
#pragma once

#include <yaml-cpp/yaml.h>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "config/config.hpp"

namespace coloc::daemon {

// Reads typed values out of a YAML node and names file, line and key in every error.
class Reader {
public:
    explicit Reader(std::string file) : file_(std::move(file)) {}
    const std::string& file() const { return file_; }

    [[noreturn]] void fail(const YAML::Node& at, const std::string& key, const std::string& why) const {
        std::ostringstream msg;
        msg << file_;
        if (at.IsDefined() && at.Mark().line >= 0) msg << ":" << at.Mark().line + 1;
        msg << ": key '" << key << "': " << why;
        throw ConfigError(msg.str());
    }

    void only_keys(const YAML::Node& map, const std::string& where, const std::set<std::string>& allowed) const {
        if (!map.IsMap()) fail(map, where, "expected a mapping");
        for (const auto& kv : map) {
            std::string k = kv.first.as<std::string>();
            if (!allowed.count(k)) {
                std::string list;
                for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
                fail(kv.first, join(where, k), "unknown key (known: " + list + ")");
            }
        }
    }

    std::string str(const YAML::Node& n, const std::string& key) const {
        if (!n.IsScalar()) fail(n, key, "expected a string");
        return n.as<std::string>();
    }

    int integer(const YAML::Node& n, const std::string& key, int min, int max) const {
        if (!n.IsScalar()) fail(n, key, "expected an integer");
        int v = 0;
        try {
            v = n.as<int>();
        } catch (const YAML::Exception&) {
            fail(n, key, "'" + n.as<std::string>() + "' is not an integer");
        }
        if (v < min || v > max)
            fail(n, key, std::to_string(v) + " is outside " + std::to_string(min) + ".." + std::to_string(max));
        return v;
    }

    bool boolean(const YAML::Node& n, const std::string& key) const {
        const std::string v = str(n, key);
        if (v != "true" && v != "false") fail(n, key, "expected true or false");
        return v == "true";
    }

    std::vector<std::string> str_list(const YAML::Node& n, const std::string& key) const {
        std::vector<std::string> out;
        if (n.IsScalar()) return {n.as<std::string>()};
        if (!n.IsSequence()) fail(n, key, "expected a list of strings");
        for (const auto& e : n) out.push_back(str(e, key));
        return out;
    }

    proto::GpuMode mode(const YAML::Node& n, const std::string& key) const {
        std::string m = str(n, key);
        if (const auto mode = proto::parse_mode(m)) return *mode;
        fail(n, key, "'" + m + "' is not one of bind, narrow, observe");
    }

    // [[0,1],[2,3]]: groups of GPU indices -> per-GPU group index.
    std::vector<int> groups(const YAML::Node& n, const std::string& key, int gpus) const {
        std::vector<int> per_gpu(static_cast<std::size_t>(gpus), -1);
        if (!n.IsSequence()) fail(n, key, "expected a list of GPU groups, e.g. [[0, 1], [2, 3]]");
        int group = 0;
        for (const auto& g : n) {
            if (!g.IsSequence()) fail(g, key, "each group must be a list of GPU indices");
            for (const auto& e : g) {
                int gpu = integer(e, key, 0, gpus - 1);
                if (per_gpu[gpu] >= 0) fail(e, key, "GPU " + std::to_string(gpu) + " is in two groups");
                per_gpu[gpu] = group;
            }
            ++group;
        }
        return per_gpu;
    }

    double number(const YAML::Node& n, const std::string& key, double min, double max) const {
        if (!n.IsScalar()) fail(n, key, "expected a number");
        double v = 0;
        try {
            v = n.as<double>();
        } catch (const YAML::Exception&) {
            fail(n, key, "'" + n.as<std::string>() + "' is not a number");
        }
        if (!(v >= min && v <= max))
            fail(n, key, n.as<std::string>() + " is outside " + plain(min) + ".." + plain(max));
        return v;
    }

    static std::string plain(double v) {
        std::ostringstream o;
        o << v;
        return o.str();
    }

    static std::string join(const std::string& a, const std::string& b) { return a.empty() ? b : a + "." + b; }

private:
    std::string file_;
};

}  // namespace coloc::daemon
