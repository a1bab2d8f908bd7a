// What `colocctl replay` uses when given nothing: a small trace built in (data/demo-trace.jsonl,
// derived from Gavel's trace, MIT) and a default cluster.
#pragma once

namespace coloc::replay {

// coloc-history JSON Lines: 300 jobs of Gavel's job types (the built-in data/demo-trace.jsonl).
const char* demo_trace_text();

struct DefaultCluster {
    static constexpr int nodes = 8;
    static constexpr int gpus_per_node = 4;
    static constexpr int slots_per_gpu = 2;
    static constexpr int island_size = 2;
    static constexpr int nodes_per_link = 8;
};

}  // namespace coloc::replay
