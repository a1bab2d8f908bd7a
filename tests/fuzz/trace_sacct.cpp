// Fuzz target: the sacct trace reader (see trace_reader.hpp).
#include "tests/fuzz/trace_reader.hpp"

COLOC_TRACE_FUZZ_TARGET(coloc::replay::TraceFormat::Sacct)
