// Small strict parsers shared by the trace readers: each returns nullopt rather than guessing,
// so that a reader can say which line and which field is wrong.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace coloc::replay {

std::string_view trim(std::string_view s);
// ASCII lower case (header names, format names).
std::string lower(std::string_view s);
std::vector<std::string_view> split(std::string_view s, char sep);
// One CSV record (RFC 4180 quoting: "a,b" and "" inside quotes); nullopt on an unclosed quote.
std::optional<std::vector<std::string>> split_csv(std::string_view line);
// Splits on runs of blanks (spaces, tabs).
std::vector<std::string_view> split_blanks(std::string_view s);

std::optional<long long> parse_int(std::string_view s);
std::optional<double> parse_number(std::string_view s);
// A count of GPUs, CPUs or nodes: a number from 0 to kMaxCount (fractions are cut); nullopt
// otherwise, so that no log value can overflow an int.
inline constexpr int kMaxCount = 1'000'000;
std::optional<int> parse_count(std::string_view s);

// "2023-04-01T10:00:00" (Slurm's ISO 8601, local time) or "2023-04-01 10:00:00" -> epoch seconds.
std::optional<double> parse_datetime(std::string_view s);
// Slurm durations: "MM", "MM:SS", "HH:MM:SS", "D-HH", "D-HH:MM", "D-HH:MM:SS" -> seconds.
std::optional<double> parse_slurm_duration(std::string_view s);

// The GPU count in a Slurm TRES string ("cpu=4,mem=16G,node=1,gres/gpu=2,gres/gpu:a100=2"): the
// untyped gres/gpu entry, else the sum of the typed ones; 0 when there is none; nullopt when a
// gres/gpu entry is not a number.
std::optional<int> tres_gpus(std::string_view tres);

// Reads the next line (without '\n' or '\r'); false at the end.
bool next_line(std::istream& in, std::string& line);

}  // namespace coloc::replay
