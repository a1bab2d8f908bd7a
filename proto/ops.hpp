// The ops colocd answers, named once for both ends: colocd's route table and the callers
// (colocctl, the plugin's launch-path messages) spell them from here.
#pragma once

#include <array>
#include <optional>
#include <string_view>
#include <utility>

namespace coloc::proto {

enum class Op {
    Place,
    Started,
    Ended,
    Status,
    Nodes,
    Jobs,
    History,
    Explain,
    Observe,
    Metrics,
    Steering,
    Profiles,
    Elastic,
    Admission
};

inline constexpr std::array<std::pair<Op, const char*>, 14> kOpNames = {{
    {Op::Place, "place"},
    {Op::Started, "started"},
    {Op::Ended, "ended"},
    {Op::Status, "status"},
    {Op::Nodes, "nodes"},
    {Op::Jobs, "jobs"},
    {Op::History, "history"},
    {Op::Explain, "explain"},
    {Op::Observe, "observe"},
    {Op::Metrics, "metrics"},
    {Op::Steering, "steering"},
    {Op::Profiles, "profiles"},
    {Op::Elastic, "elastic"},
    {Op::Admission, "admission"},
}};

// The op's name on the wire.
constexpr const char* op_name(Op op) {
    for (const auto& [o, name] : kOpNames)
        if (o == op) return name;
    return "unknown";
}

// The op a wire name stands for; nullopt for a name colocd does not know.
constexpr std::optional<Op> op_from_name(std::string_view name) {
    for (const auto& [o, n] : kOpNames)
        if (name == n) return o;
    return std::nullopt;
}

}  // namespace coloc::proto
