#include "ctl/output.hpp"

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <iostream>
#include <sstream>
#include <utility>

#include "proto/client.hpp"
#include "proto/curve.hpp"
#include "proto/errors.hpp"

namespace coloc::ctl {

std::string iso_time(std::int64_t epoch) {
    std::time_t t = static_cast<std::time_t>(epoch);
    std::tm tm{};
    localtime_r(&t, &tm);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
    return buf;
}

std::string cell(const std::string& field, const json& value) {
    if (value.is_null())
        return field.find("time") != std::string::npos || field == "start" || field == "end" ? "Unknown" : "";
    if (value.is_string()) return value.get<std::string>();
    if (value.is_boolean()) return value.get<bool>() ? "yes" : "no";
    if (value.is_number_integer() && (field == "start" || field == "end" || field == "submit" || field == "started" ||
                                      field == "created" || field == "database_last_retry"))
        return iso_time(value.get<std::int64_t>());
    if (value.is_number_float()) {
        char buf[32];
        std::snprintf(buf, sizeof buf, "%.3f", value.get<double>());
        return buf;
    }
    if (value.is_array()) {
        std::string s;
        for (const auto& e : value) s += (s.empty() ? "" : ",") + cell(field, e);
        return s;
    }
    return value.dump();
}

void print_json(const std::string& command, const std::string& kind, const json& records, const json& errors) {
    json out = {{"meta", {{"command", command}, {"coloc_version", "0.1"}, {"time", iso_time(std::time(nullptr))}}},
                {"errors", errors},
                {kind, records}};
    std::cout << out.dump(2) << "\n";
}

int print_records(const CtlOptions& opts, const std::string& kind, const json& records,
                  const std::vector<Field>& fields, const std::string& default_fields) {
    if (opts.json) {
        print_json(kind, kind, records, json::array());
        return 0;
    }
    std::vector<const Field*> chosen;
    std::stringstream list(opts.format.empty() ? default_fields : opts.format);
    for (std::string name; std::getline(list, name, ',');) {
        if (name.empty()) continue;
        auto it = std::find_if(fields.begin(), fields.end(), [&](const Field& f) { return name == f.name; });
        if (it == fields.end()) {
            std::string known;
            for (const auto& f : fields) known += (known.empty() ? "" : ",") + std::string(f.name);
            std::cerr << "colocctl: error: unknown field '" << name << "' (fields: " << known << ")\n";
            return 2;
        }
        chosen.push_back(&*it);
    }
    std::vector<std::vector<std::string>> rows;
    for (const auto& r : records) {
        std::vector<std::string> row;
        for (const Field* f : chosen) row.push_back(cell(f->name, r.contains(f->name) ? r[f->name] : json()));
        rows.push_back(std::move(row));
    }
    if (opts.parsable) {
        auto line = [](const std::vector<std::string>& cells) {
            std::string s;
            for (std::size_t i = 0; i < cells.size(); ++i) s += (i ? "|" : "") + cells[i];
            return s;
        };
        if (!opts.noheader) {
            std::vector<std::string> h;
            for (const Field* f : chosen) h.push_back(f->header);
            std::cout << line(h) << "\n";
        }
        for (const auto& r : rows) std::cout << line(r) << "\n";
        return 0;
    }
    std::vector<std::size_t> width;
    for (const Field* f : chosen) width.push_back(std::string(f->header).size());
    for (const auto& r : rows)
        for (std::size_t i = 0; i < r.size(); ++i) width[i] = std::max(width[i], r[i].size());
    auto print_row = [&](const std::vector<std::string>& cells) {
        std::string s;
        for (std::size_t i = 0; i < cells.size(); ++i) {
            std::string pad(width[i] - cells[i].size(), ' ');
            s += (i ? " " : "") + (chosen[i]->right ? pad + cells[i] : cells[i] + (i + 1 < cells.size() ? pad : ""));
        }
        std::cout << s << "\n";
    };
    if (!opts.noheader) {
        std::vector<std::string> h;
        for (const Field* f : chosen) h.push_back(f->header);
        print_row(h);
    }
    for (const auto& r : rows) print_row(r);
    return 0;
}

json op_request(proto::Op op) { return {{"op", proto::op_name(op)}}; }

namespace {

// colocd's public key, as CtlOptions::server_key_file says; "" (with a warning once) for none.
// Throws ProtoError naming the file when it cannot be used: never unauthenticated instead.
std::string server_key(const CtlOptions& opts) {
    static constexpr const char* kDefault = "/etc/coloc/colocd.pub";
    std::string file = opts.server_key_file;
    std::error_code ec;
    if (file.empty() && std::filesystem::exists(kDefault, ec)) file = kDefault;
    if (file.empty()) {
        static bool warned = false;
        if (!std::exchange(warned, true))
            std::cerr << "colocctl: warning: no server key (--server-key, COLOC_SERVER_KEY, " << kDefault
                      << "): the reply from " << opts.endpoint << " is not authenticated\n";
        return "";
    }
    try {
        return proto::read_key_file(file);
    } catch (const std::exception& e) {
        throw proto::ProtoError(proto::code::kInternal, std::string(e.what()) + ": colocd is not asked");
    }
}

}  // namespace

json ask_daemon(const CtlOptions& opts, json request) {
    if (!opts.cluster.empty()) request["cluster"] = opts.cluster;
    return proto::call(opts.endpoint, request, {opts.munge_socket, opts.timeout_ms, nullptr, server_key(opts)});
}

bool call_daemon(const CtlOptions& opts, const std::string& command, const std::string& kind, json request, json& reply,
                 int& exit_code) {
    try {
        reply = ask_daemon(opts, std::move(request));
        return true;
    } catch (const proto::ProtoError& e) {
        exit_code = e.code() == proto::code::kUnavailable ? 3 : 1;
        if (opts.json)
            print_json(command, kind, json::array(), json::array({{{"code", e.code()}, {"message", e.what()}}}));
        else
            std::cerr << "colocctl: error: " << e.what() << "\n";
        return false;
    }
}

}  // namespace coloc::ctl
