// Validating field readers: every error names the field and the reason, so a bad message is
// refused with a message a person can act on.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace coloc::proto {

using json = nlohmann::json;

inline constexpr std::size_t kMaxString = 256;
inline constexpr std::size_t kMaxList = 1024;

std::string get_string(const json& obj, const char* key, std::size_t max_len = kMaxString);
std::string get_string_or(const json& obj, const char* key, const std::string& fallback,
                          std::size_t max_len = kMaxString);
std::int64_t get_int(const json& obj, const char* key, std::int64_t min, std::int64_t max);
std::int64_t get_int_or(const json& obj, const char* key, std::int64_t fallback, std::int64_t min, std::int64_t max);
double get_number_or(const json& obj, const char* key, double fallback, double min, double max);
bool get_bool_or(const json& obj, const char* key, bool fallback);
std::vector<int> get_int_list_or(const json& obj, const char* key, int min, int max, std::size_t max_len = kMaxList);
std::vector<std::string> get_string_list_or(const json& obj, const char* key, std::size_t max_len = kMaxList);
// One of a fixed set of words.
std::string get_enum_or(const json& obj, const char* key, const std::vector<std::string>& allowed,
                        const std::string& fallback);

}  // namespace coloc::proto
