#include "slurm/gres_detail.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>

#include "proto/messages.hpp"

namespace coloc::slurm {

namespace {

[[noreturn]] void bad(std::string_view detail, const std::string& why) {
    throw GresDetailError("gres detail '" + std::string(detail) + "': " + why);
}

// A non-negative decimal that is all of `text`, at most `max`.
bool whole_number(std::string_view text, int max, int& out) {
    if (text.empty()) return false;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
    return ec == std::errc() && end == text.data() + text.size() && out >= 0 && out <= max;
}

// "0-1,3" -> {0, 1, 3}.
std::vector<int> index_list(std::string_view detail, std::string_view text) {
    if (text == "N/A") bad(detail, "Slurm names no GPU indexes (IDX:N/A)");
    if (text.empty()) bad(detail, "empty IDX list");
    std::vector<int> out;
    while (!text.empty()) {
        const std::size_t comma = text.find(',');
        const std::string_view part = text.substr(0, comma);
        text = comma == std::string_view::npos ? std::string_view{} : text.substr(comma + 1);
        if (comma != std::string_view::npos && text.empty()) bad(detail, "IDX list ends with ','");
        const std::size_t dash = part.find('-');
        int a = 0, b = 0;
        if (!whole_number(part.substr(0, dash), proto::kMaxGpuIndex, a) ||
            (dash != std::string_view::npos && !whole_number(part.substr(dash + 1), proto::kMaxGpuIndex, b)))
            bad(detail, "'" + std::string(part) + "' is not a GPU index or range (0 to " +
                            std::to_string(proto::kMaxGpuIndex) + ")");
        if (dash == std::string_view::npos) b = a;
        if (b < a) bad(detail, "range '" + std::string(part) + "' runs backwards");
        for (int g = a; g <= b; ++g) {
            if (std::find(out.begin(), out.end(), g) != out.end())
                bad(detail, "GPU " + std::to_string(g) + " is listed twice");
            out.push_back(g);
        }
    }
    std::sort(out.begin(), out.end());
    return out;
}

// Top-level items: commas inside parentheses belong to IDX lists.
std::vector<std::string_view> items_of(std::string_view detail) {
    std::vector<std::string_view> items;
    int depth = 0;
    std::size_t start = 0;
    for (std::size_t i = 0; i <= detail.size(); ++i) {
        const char c = i < detail.size() ? detail[i] : ',';
        if (c == '(' && ++depth > 1) bad(detail, "nested '(' at offset " + std::to_string(i));
        if (c == ')' && --depth < 0) bad(detail, "')' without '(' at offset " + std::to_string(i));
        if (c == ',' && depth == 0) {
            if (i == start) bad(detail, "empty item at offset " + std::to_string(i));
            items.push_back(detail.substr(start, i - start));
            start = i + 1;
        }
    }
    if (depth != 0) bad(detail, "'(' not closed");
    return items;
}

}  // namespace

NodeGres parse_node_gres(std::string_view detail) {
    NodeGres out;
    if (detail.empty()) return out;
    for (std::string_view item : items_of(detail)) {
        const std::size_t paren = item.find('(');
        const std::string_view head = item.substr(0, paren);
        std::string_view inner;
        if (paren != std::string_view::npos) {
            if (item.back() != ')') bad(detail, "text after ')' in '" + std::string(item) + "'");
            inner = item.substr(paren + 1, item.size() - paren - 2);
        }
        const std::string_view name = head.substr(0, head.find(':'));
        if (name.empty()) bad(detail, "item '" + std::string(item) + "' has no GRES name");
        if (name != "gpu" && name != "gpuslot") continue;
        // A count, when given, is the last ':'-field of the head ("gpu:a100:2"); "CNT:n" inside
        // the parentheses is the other way Slurm writes it (count-only GRES).
        int count = -1;
        if (const std::size_t colon = head.rfind(':'); colon != std::string_view::npos) {
            const std::string_view last = head.substr(colon + 1);
            if (!last.empty() && std::isdigit(static_cast<unsigned char>(last.front())) &&
                !whole_number(last, 1 << 20, count))
                bad(detail, "count '" + std::string(last) + "' of '" + std::string(item) + "' is not a number");
        }
        std::vector<int> indexes;
        bool named = false;
        if (paren != std::string_view::npos) {
            int cnt = 0;
            if (inner.starts_with("IDX:")) {
                indexes = index_list(detail, inner.substr(4));
                named = true;
            } else if (inner.starts_with("CNT:") && whole_number(inner.substr(4), 1 << 20, cnt)) {
                if (count >= 0 && count != cnt)
                    bad(detail, "'" + std::string(item) + "' gives two different counts");
                count = cnt;
            } else {
                bad(detail, "'(" + std::string(inner) + ")' in '" + std::string(item) + "' is neither IDX:... nor CNT:n");
            }
        }
        if (name == "gpuslot") {
            if (count < 0) bad(detail, "'" + std::string(item) + "' gives no slot count");
            out.slot_count += count;
            continue;
        }
        if (!named && count == 0) continue;  // "gpu:0": none here
        if (!named) bad(detail, "'" + std::string(item) + "' names no GPU indexes (no IDX:...)");
        if (count >= 0 && count != static_cast<int>(indexes.size()))
            bad(detail, "'" + std::string(item) + "' counts " + std::to_string(count) + " GPUs but lists " +
                            std::to_string(indexes.size()));
        for (int g : indexes) {  // several typed items ("gpu:a100:1(IDX:0),gpu:v100:1(IDX:2)") add up
            if (std::find(out.gpus.begin(), out.gpus.end(), g) != out.gpus.end())
                bad(detail, "GPU " + std::to_string(g) + " is listed twice");
            out.gpus.push_back(g);
        }
    }
    std::sort(out.gpus.begin(), out.gpus.end());
    out.gpu_count = static_cast<int>(out.gpus.size());
    return out;
}

}  // namespace coloc::slurm
