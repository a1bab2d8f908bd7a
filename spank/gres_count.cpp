#include "spank/gres_count.hpp"

#include <charconv>
#include <string>
#include <vector>

namespace coloc::spank {

namespace {

// Splits at commas outside parentheses: "gpu(IDX:0,2),gpuslot(CNT:1)" has two entries.
std::vector<std::string_view> split_top_level(std::string_view s) {
    std::vector<std::string_view> out;
    int depth = 0;
    std::size_t start = 0;
    for (std::size_t i = 0; i < s.size(); ++i) {
        if (s[i] == '(') ++depth;
        else if (s[i] == ')' && depth > 0) --depth;
        else if (s[i] == ',' && depth == 0) {
            out.push_back(s.substr(start, i - start));
            start = i + 1;
        }
    }
    out.push_back(s.substr(start));
    return out;
}

bool to_int(std::string_view s, long long& v) {
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    return !s.empty() && ec == std::errc() && end == s.data() + s.size() && v >= 0;
}

// "0-1,3" -> 3
int count_index_list(std::string_view list) {
    int n = 0;
    for (std::string_view part : split_top_level(list)) {
        auto dash = part.find('-');
        long long a = 0, b = 0;
        if (dash == std::string_view::npos) {
            if (!to_int(part, a)) return -1;
            ++n;
        } else {
            if (!to_int(part.substr(0, dash), a) || !to_int(part.substr(dash + 1), b) || b < a) return -1;
            n += static_cast<int>(b - a + 1);
        }
    }
    return n;
}

std::string_view name_of(std::string_view entry) {
    return entry.substr(0, entry.find_first_of(":("));
}

}  // namespace

int gres_count_in_detail(std::string_view detail, std::string_view name) {
    int total = 0;
    for (std::string_view entry : split_top_level(detail)) {
        if (entry.empty() || name_of(entry) != name) continue;
        auto open = entry.find('(');
        std::string_view head = entry.substr(0, open);
        int n = -1;
        if (open != std::string_view::npos && entry.back() == ')') {
            std::string_view inner = entry.substr(open + 1, entry.size() - open - 2);
            if (inner.rfind("CNT:", 0) == 0) {
                long long v = 0;
                if (to_int(inner.substr(4), v)) n = static_cast<int>(v);
            } else if (inner.rfind("IDX:", 0) == 0) {
                n = count_index_list(inner.substr(4));
            }
        }
        if (n < 0) {
            // "gpuslot:3" or "gpuslot:type:3" without details
            auto colon = head.rfind(':');
            long long v = 0;
            if (colon != std::string_view::npos && to_int(head.substr(colon + 1), v)) n = static_cast<int>(v);
        }
        if (n < 0) return -1;
        total += n;
    }
    return total;
}

int gres_count_in_tres(std::string_view tres, std::string_view name) {
    int total = 0;
    for (std::string_view entry : split_top_level(tres)) {
        if (entry.rfind("gres:", 0) == 0 || entry.rfind("gres/", 0) == 0) entry.remove_prefix(5);
        else continue;
        if (name_of(entry) != name) continue;
        auto colon = entry.rfind(':');
        if (colon == std::string_view::npos) {
            total += 1;  // "gres:gpuslot" means one
            continue;
        }
        long long v = 0;
        if (to_int(entry.substr(colon + 1), v)) {
            total += static_cast<int>(v);
        } else if (entry.find(':') == colon) {
            total += 1;  // "gres:gpuslot:fast": a type, count one
        } else {
            return -1;
        }
    }
    return total;
}

}  // namespace coloc::spank
