// Minimal CSV line splitting shared by the measurement and pair readers: commas, optional
// double quotes ("" inside quotes is a quote), surrounding blanks trimmed.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace coloc::model::io {

// Fields of one line, or nullopt when a quote is left open (the caller reports the line).
std::optional<std::vector<std::string>> split_csv_line(const std::string& line);

// True for blank lines and lines whose first non-blank character is '#'.
bool is_csv_comment(const std::string& line);

}  // namespace coloc::model::io
