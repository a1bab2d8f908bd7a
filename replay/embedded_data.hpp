// The files of data/ that the Makefile links into libcoloc_core as bytes (ld -r -b binary; see
// data/README.md), so that colocctl replay and the benches need no data directory at run time.
#pragma once

#include <string_view>

namespace coloc::replay::embedded {

std::string_view gavel_solo_csv();   // data/gavel/solo.csv
std::string_view gavel_pairs_csv();  // data/gavel/pairs.csv
std::string_view demo_trace();       // data/demo-trace.jsonl

}  // namespace coloc::replay::embedded
