#include "replay/embedded_data.hpp"

#include <string>

#include "replay/demo.hpp"

// ld names the symbols after the path it was given, from the repository root.
extern "C" {
extern const char _binary_data_gavel_solo_csv_start[], _binary_data_gavel_solo_csv_end[];
extern const char _binary_data_gavel_pairs_csv_start[], _binary_data_gavel_pairs_csv_end[];
extern const char _binary_data_demo_trace_jsonl_start[], _binary_data_demo_trace_jsonl_end[];
}

namespace coloc::replay {

namespace embedded {

std::string_view gavel_solo_csv() { return {_binary_data_gavel_solo_csv_start, _binary_data_gavel_solo_csv_end}; }

std::string_view gavel_pairs_csv() { return {_binary_data_gavel_pairs_csv_start, _binary_data_gavel_pairs_csv_end}; }

std::string_view demo_trace() { return {_binary_data_demo_trace_jsonl_start, _binary_data_demo_trace_jsonl_end}; }

}  // namespace embedded

const char* demo_trace_text() {
    static const std::string text(embedded::demo_trace());  // the linked bytes end without a NUL
    return text.c_str();
}

}  // namespace coloc::replay
