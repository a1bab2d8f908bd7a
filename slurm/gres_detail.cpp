#include "slurm/gres_detail.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>

#include "base/limits.hpp"

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
        if (!whole_number(part.substr(0, dash), base::kMaxGpuIndex, a) ||
            (dash != std::string_view::npos && !whole_number(part.substr(dash + 1), base::kMaxGpuIndex, b)))
            bad(detail, "'" + std::string(part) + "' is not a GPU index or range (0 to " +
                            std::to_string(base::kMaxGpuIndex) + ")");
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

// One item of a GRES this module reads: the count its head or CNT:n gives (-1: none) and the
// indexes IDX:... lists (`named`).
struct Item {
    int count = -1;
    bool named = false;
    std::vector<int> indexes;
};

Item read_item(std::string_view detail, std::string_view item) {
    const std::size_t paren = item.find('(');
    const std::string_view head = item.substr(0, paren);
    // A count, when given, is the last ':'-field of the head ("gpu:a100:2"); "CNT:n" inside
    // the parentheses is the other way Slurm writes it (count-only GRES).
    Item out;
    if (const std::size_t colon = head.rfind(':'); colon != std::string_view::npos) {
        const std::string_view last = head.substr(colon + 1);
        if (!last.empty() && std::isdigit(static_cast<unsigned char>(last.front())) &&
            !whole_number(last, 1 << 20, out.count))
            bad(detail, "count '" + std::string(last) + "' of '" + std::string(item) + "' is not a number");
    }
    if (paren == std::string_view::npos) return out;
    const std::string_view inner = item.substr(paren + 1, item.size() - paren - 2);
    int cnt = 0;
    if (inner.starts_with("IDX:")) {
        out.indexes = index_list(detail, inner.substr(4));
        out.named = true;
    } else if (inner.starts_with("CNT:") && whole_number(inner.substr(4), 1 << 20, cnt)) {
        if (out.count >= 0 && out.count != cnt) bad(detail, "'" + std::string(item) + "' gives two different counts");
        out.count = cnt;
    } else {
        bad(detail, "'(" + std::string(inner) + ")' in '" + std::string(item) + "' is neither IDX:... nor CNT:n");
    }
    return out;
}

// The GRES name of an item, checked: "gpu" of "gpu:a100:1(IDX:3)".
std::string_view name_of(std::string_view detail, std::string_view item) {
    if (const std::size_t paren = item.find('('); paren != std::string_view::npos && item.back() != ')')
        bad(detail, "text after ')' in '" + std::string(item) + "'");
    const std::string_view name = item.substr(0, item.find_first_of(":("));
    if (name.empty()) bad(detail, "item '" + std::string(item) + "' has no GRES name");
    return name;
}

}  // namespace

NodeGres parse_node_gres(std::string_view detail) {
    NodeGres out;
    if (detail.empty()) return out;
    for (std::string_view item : items_of(detail)) {
        const std::string_view name = name_of(detail, item);
        if (name != "gpu" && name != "gpuslot") continue;
        auto [count, named, indexes] = read_item(detail, item);
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

int gres_count(std::string_view detail, std::string_view name) {
    int total = 0;
    if (detail.empty()) return total;
    for (std::string_view item : items_of(detail)) {
        if (name_of(detail, item) != name) continue;
        const Item it = read_item(detail, item);
        if (it.named && it.count >= 0 && it.count != static_cast<int>(it.indexes.size()))
            bad(detail, "'" + std::string(item) + "' counts " + std::to_string(it.count) + " but lists " +
                            std::to_string(it.indexes.size()));
        if (!it.named && it.count < 0) bad(detail, "'" + std::string(item) + "' gives no count");
        total += it.named ? static_cast<int>(it.indexes.size()) : it.count;
    }
    return total;
}

int tres_per_node_count(std::string_view tres, std::string_view name) {
    int total = 0;
    while (!tres.empty()) {
        const std::size_t comma = tres.find(',');
        std::string_view entry = tres.substr(0, comma);
        tres = comma == std::string_view::npos ? std::string_view{} : tres.substr(comma + 1);
        if (!entry.starts_with("gres:") && !entry.starts_with("gres/")) continue;  // cpu=4, mem=...
        entry.remove_prefix(5);
        if (entry.substr(0, entry.find(':')) != name) continue;
        // "gpuslot" and "gpuslot:fast" (a type) mean one; "gpuslot:3" and "gpuslot:fast:3" give the count.
        const std::size_t colon = entry.rfind(':');
        int n = 1;
        if (colon != std::string_view::npos && !whole_number(entry.substr(colon + 1), 1 << 20, n)) {
            if (entry.find(':') != colon)
                throw GresDetailError("tres_per_node entry '" + std::string(entry) + "' gives no count");
            n = 1;
        }
        total += n;
    }
    return total;
}

}  // namespace coloc::slurm
