#include "spank/plugin_args.hpp"

#include <cctype>
#include <charconv>
#include <filesystem>
#include <stdexcept>

#include "proto/curve.hpp"

namespace coloc::spank {

namespace {

constexpr int kMaxTimeoutMs = 10000;  // a launch must never wait longer than this on colocd
constexpr int kMaxGpus = 1024;
constexpr int kMaxSlotsPerGpu = 64;

bool parse_int(const std::string& text, int min, int max, int& out, std::string& why) {
    int v = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (text.empty() || ec != std::errc() || end != text.data() + text.size()) {
        why = "not an integer";
        return false;
    }
    if (v < min || v > max) {
        why = "outside " + std::to_string(min) + ".." + std::to_string(max);
        return false;
    }
    out = v;
    return true;
}

bool valid_endpoint(const std::string& v) {
    return (v.rfind("ipc://", 0) == 0 && v.size() > 6 && v.size() <= 107 + 6) ||
           (v.rfind("tcp://", 0) == 0 && v.size() > 6);
}

bool valid_gres_name(const std::string& s) {
    if (s.empty() || s.size() > 64) return false;
    for (char c : s)
        if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-')) return false;
    return true;
}

// The key named, else the default one when it is there. A key named but unusable is no reason to
// send credentials unauthenticated: the plugin then asks colocd nothing.
void read_server_key(PluginConfig& c) {
    std::error_code ec;
    if (c.server_key_file.empty() && std::filesystem::exists(kDefaultServerKeyFile, ec))
        c.server_key_file = kDefaultServerKeyFile;
    if (c.server_key_file.empty()) return;
    try {
        c.server_key = proto::read_key_file(c.server_key_file);
    } catch (const std::exception& e) {
        c.server_key_problem = std::string("server_key: ") + e.what() + ": colocd is not asked";
    }
}

}  // namespace

ParsedArgs parse_plugin_args(const std::vector<std::string>& args) {
    ParsedArgs out;
    PluginConfig& c = out.config;
    for (const std::string& arg : args) {
        auto eq = arg.find('=');
        if (eq == std::string::npos) {
            out.errors.push_back(arg + " (expected key=value)");
            continue;
        }
        const std::string key = arg.substr(0, eq);
        const std::string value = arg.substr(eq + 1);
        std::string why;
        if (key == "endpoint" || key == "report_endpoint") {
            if (valid_endpoint(value))
                (key == "endpoint" ? c.endpoint : c.report_endpoint) = value;
            else
                why = "expected ipc://PATH or tcp://HOST:PORT";
        } else if (key == "timeout_ms") {
            parse_int(value, 1, kMaxTimeoutMs, c.timeout_ms, why);
        } else if (key == "mode") {
            if (value == proto::kAutoMode)
                c.mode.reset();
            else if (const auto mode = proto::parse_mode(value))
                c.mode = mode;
            else
                why = "expected auto, bind, narrow or observe";
        } else if (key == "gpus") {
            parse_int(value, 0, kMaxGpus, c.gpus, why);
        } else if (key == "slots_per_gpu") {
            parse_int(value, 0, kMaxSlotsPerGpu, c.slots_per_gpu, why);
        } else if (key == "state_dir") {
            if (!value.empty() && value[0] == '/' && value.size() < 200)
                c.state_dir = value;
            else
                why = "expected an absolute path";
        } else if (key == "munge_socket") {
            if (!value.empty() && value[0] == '/')
                c.munge_socket = value;
            else
                why = "expected an absolute path";
        } else if (key == "timings") {
            if (!value.empty() && value[0] == '/')
                c.timings_file = value;
            else
                why = "expected an absolute path";
        } else if (key == "cluster") {
            // A colocd serving another cluster refuses the request, and the job falls back.
            if (valid_gres_name(value))  // the same characters as a GRES name
                c.cluster = value;
            else
                why = "expected a cluster name";
        } else if (key == "server_key") {
            if (!value.empty() && value[0] == '/')
                c.server_key_file = value;
            else
                why = "expected an absolute path";
        } else if (key == "slot_gres") {
            if (valid_gres_name(value))
                c.slot_gres = value;
            else
                why = "expected a GRES name";
        } else if (key == "isolate") {
            if (value == "on")
                c.isolate = PluginConfig::Isolate::On;
            else if (value == "off")
                c.isolate = PluginConfig::Isolate::Off;
            else if (value == "required")
                c.isolate = PluginConfig::Isolate::Required;
            else
                why = "expected on, off or required";
        } else if (key == "device_cgroup") {
            if (value == "auto")
                c.device_cgroup = DeviceCgroup::Auto;
            else if (value == "v1")
                c.device_cgroup = DeviceCgroup::V1;
            else if (value == "v2")
                c.device_cgroup = DeviceCgroup::V2;
            else
                why = "expected auto, v1 or v2";
        } else if (key == "gpu_devices") {
            if (!value.empty() && value[0] == '/' && value.size() < 200)
                c.gpu_devices = value;
            else
                why = "expected an absolute path prefix";
        } else {
            why = "unknown argument";
        }
        if (!why.empty()) out.errors.push_back(arg + " (" + why + ")");
    }
    read_server_key(c);
    return out;
}

ParsedArgs parse_plugin_args(int argc, char** argv) {
    std::vector<std::string> args;
    for (int i = 0; i < argc; ++i)
        if (argv && argv[i]) args.emplace_back(argv[i]);
    return parse_plugin_args(args);
}

std::string join_errors(const std::vector<std::string>& errors) {
    std::string s;
    for (const auto& e : errors) s += (s.empty() ? "" : "; ") + e;
    return s;
}

}  // namespace coloc::spank
