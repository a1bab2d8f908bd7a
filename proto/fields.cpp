#include "proto/fields.hpp"

#include <algorithm>

#include "proto/errors.hpp"

namespace coloc::proto {

namespace {

[[noreturn]] void bad(const char* key, const std::string& why) {
    throw ProtoError(code::kBadField, std::string("field '") + key + "': " + why);
}

const json* find(const json& obj, const char* key) {
    if (!obj.is_object()) throw ProtoError(code::kBadField, "message is not a JSON object");
    auto it = obj.find(key);
    if (it == obj.end() || it->is_null()) return nullptr;
    return &*it;
}

std::int64_t as_int(const json& v, const char* key, std::int64_t min, std::int64_t max) {
    std::int64_t n = 0;
    if (v.is_number_unsigned()) {
        auto u = v.get<std::uint64_t>();
        if (u > static_cast<std::uint64_t>(INT64_MAX)) bad(key, "out of range");
        n = static_cast<std::int64_t>(u);
    } else if (v.is_number_integer()) {
        n = v.get<std::int64_t>();
    } else {
        bad(key, std::string("expected an integer, got ") + v.type_name());
    }
    if (n < min || n > max)
        bad(key, std::to_string(n) + " is outside " + std::to_string(min) + ".." + std::to_string(max));
    return n;
}

}  // namespace

std::string get_string(const json& obj, const char* key, std::size_t max_len) {
    const json* v = find(obj, key);
    if (!v) bad(key, "missing");
    if (!v->is_string()) bad(key, std::string("expected a string, got ") + v->type_name());
    const auto& s = v->get_ref<const std::string&>();
    if (s.size() > max_len) bad(key, "longer than " + std::to_string(max_len) + " bytes");
    return s;
}

std::string get_string_or(const json& obj, const char* key, const std::string& fallback, std::size_t max_len) {
    return find(obj, key) ? get_string(obj, key, max_len) : fallback;
}

std::int64_t get_int(const json& obj, const char* key, std::int64_t min, std::int64_t max) {
    const json* v = find(obj, key);
    if (!v) bad(key, "missing");
    return as_int(*v, key, min, max);
}

std::int64_t get_int_or(const json& obj, const char* key, std::int64_t fallback, std::int64_t min, std::int64_t max) {
    const json* v = find(obj, key);
    return v ? as_int(*v, key, min, max) : fallback;
}

double get_number_or(const json& obj, const char* key, double fallback, double min, double max) {
    const json* v = find(obj, key);
    if (!v) return fallback;
    if (!v->is_number()) bad(key, std::string("expected a number, got ") + v->type_name());
    double d = v->get<double>();
    if (!(d >= min && d <= max))
        bad(key, std::to_string(d) + " is outside " + std::to_string(min) + ".." + std::to_string(max));
    return d;
}

bool get_bool_or(const json& obj, const char* key, bool fallback) {
    const json* v = find(obj, key);
    if (!v) return fallback;
    if (!v->is_boolean()) bad(key, std::string("expected true or false, got ") + v->type_name());
    return v->get<bool>();
}

std::vector<int> get_int_list_or(const json& obj, const char* key, int min, int max, std::size_t max_len) {
    const json* v = find(obj, key);
    std::vector<int> out;
    if (!v) return out;
    if (!v->is_array()) bad(key, std::string("expected a list, got ") + v->type_name());
    if (v->size() > max_len) bad(key, "more than " + std::to_string(max_len) + " entries");
    out.reserve(v->size());
    for (const json& e : *v) out.push_back(static_cast<int>(as_int(e, key, min, max)));
    return out;
}

std::vector<std::string> get_string_list_or(const json& obj, const char* key, std::size_t max_len) {
    const json* v = find(obj, key);
    std::vector<std::string> out;
    if (!v) return out;
    if (!v->is_array()) bad(key, std::string("expected a list, got ") + v->type_name());
    if (v->size() > max_len) bad(key, "more than " + std::to_string(max_len) + " entries");
    for (const json& e : *v) {
        if (!e.is_string()) bad(key, "every entry must be a string");
        if (e.get_ref<const std::string&>().size() > kMaxString) bad(key, "entry too long");
        out.push_back(e.get<std::string>());
    }
    return out;
}

std::string get_enum_or(const json& obj, const char* key, const std::vector<std::string>& allowed,
                        const std::string& fallback) {
    if (!find(obj, key)) return fallback;
    std::string s = get_string(obj, key);
    if (std::find(allowed.begin(), allowed.end(), s) == allowed.end()) {
        std::string list;
        for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
        bad(key, "'" + s + "' is not one of " + list);
    }
    return s;
}

}  // namespace coloc::proto
