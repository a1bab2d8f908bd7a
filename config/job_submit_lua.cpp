#include "config/job_submit_lua.hpp"

#include <fstream>

namespace coloc::daemon {

namespace {

// The value of `local NAME = VALUE` on `line`, nullopt when the line assigns something else.
std::optional<std::string> assigned(const std::string& line, const std::string& name) {
    const std::string head = "local " + name;
    const auto from = line.find_first_not_of(" \t");
    if (from == std::string::npos || line.compare(from, head.size(), head) != 0) return std::nullopt;
    auto at = line.find_first_not_of(" \t", from + head.size());
    if (at == std::string::npos || line[at] != '=') return std::nullopt;
    at = line.find_first_not_of(" \t", at + 1);
    return at == std::string::npos ? std::string() : line.substr(at);
}

// The strings quoted with " in `text`, in order.
std::vector<std::string> quoted(const std::string& text) {
    std::vector<std::string> out;
    for (auto open = text.find('"'); open != std::string::npos;) {
        const auto close = text.find('"', open + 1);
        if (close == std::string::npos) break;
        out.push_back(text.substr(open + 1, close - open - 1));
        open = text.find('"', close + 1);
    }
    return out;
}

}  // namespace

std::optional<JobSubmitLua> read_job_submit_lua(const std::string& path) {
    std::ifstream in(path);
    if (!in) return std::nullopt;
    JobSubmitLua out;
    out.path = path;
    std::string line;
    for (int n = 1; std::getline(in, line); ++n) {
        if (const auto list = assigned(line, "bind_partitions");
            list && !out.partitions_line && !list->empty() && list->front() == '{') {
            out.partitions_line = n;
            out.bind_partitions = quoted(list->substr(0, list->find('}')));
        } else if (const auto file = assigned(line, "OFFERS_FILE"); file && !out.offers_line) {
            const std::vector<std::string> q = quoted(*file);
            if (q.empty()) continue;
            out.offers_line = n;
            out.offers_file = q.front();
        }
    }
    return out;
}

}  // namespace coloc::daemon
