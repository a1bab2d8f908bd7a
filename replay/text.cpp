#include "replay/text.hpp"

#include <cctype>
#include <charconv>
#include <cmath>
#include <ctime>
#include <istream>

namespace coloc::replay {

std::string lower(std::string_view s) {
    std::string out(s);
    for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
}

std::string_view trim(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
    return s;
}

std::vector<std::string_view> split(std::string_view s, char sep) {
    std::vector<std::string_view> out;
    std::size_t start = 0;
    while (true) {
        std::size_t at = s.find(sep, start);
        if (at == std::string_view::npos) {
            out.push_back(s.substr(start));
            return out;
        }
        out.push_back(s.substr(start, at - start));
        start = at + 1;
    }
}

std::optional<std::vector<std::string>> split_csv(std::string_view line) {
    std::vector<std::string> out;
    std::string cur;
    bool quoted = false;
    for (std::size_t i = 0; i < line.size(); ++i) {
        char c = line[i];
        if (quoted) {
            if (c == '"') {
                if (i + 1 < line.size() && line[i + 1] == '"') {
                    cur += '"';
                    ++i;
                } else {
                    quoted = false;
                }
            } else {
                cur += c;
            }
        } else if (c == '"') {
            quoted = true;
        } else if (c == ',') {
            out.push_back(std::move(cur));
            cur.clear();
        } else {
            cur += c;
        }
    }
    if (quoted) return std::nullopt;
    out.push_back(std::move(cur));
    return out;
}

std::vector<std::string_view> split_blanks(std::string_view s) {
    std::vector<std::string_view> out;
    std::size_t i = 0;
    while (i < s.size()) {
        while (i < s.size() && (s[i] == ' ' || s[i] == '\t' || s[i] == '\r')) ++i;
        std::size_t start = i;
        while (i < s.size() && s[i] != ' ' && s[i] != '\t' && s[i] != '\r') ++i;
        if (i > start) out.push_back(s.substr(start, i - start));
    }
    return out;
}

std::optional<long long> parse_int(std::string_view s) {
    s = trim(s);
    if (!s.empty() && s.front() == '+') s.remove_prefix(1);
    long long v = 0;
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (s.empty() || ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
    return v;
}

std::optional<double> parse_number(std::string_view s) {
    s = trim(s);
    if (!s.empty() && s.front() == '+') s.remove_prefix(1);
    double v = 0;
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (s.empty() || ec != std::errc() || end != s.data() + s.size() || !std::isfinite(v)) return std::nullopt;
    return v;
}

std::optional<int> parse_count(std::string_view s) {
    auto v = parse_number(s);
    if (!v || !(*v >= 0) || *v > kMaxCount) return std::nullopt;
    return static_cast<int>(*v);
}

std::optional<double> parse_datetime(std::string_view s) {
    s = trim(s);
    // YYYY-MM-DD[T ]HH:MM:SS
    if (s.size() != 19 || s[4] != '-' || s[7] != '-' || (s[10] != 'T' && s[10] != ' ') || s[13] != ':' || s[16] != ':')
        return std::nullopt;
    auto num = [&](std::size_t at, std::size_t len) { return parse_int(s.substr(at, len)); };
    auto y = num(0, 4), mo = num(5, 2), d = num(8, 2), h = num(11, 2), mi = num(14, 2), se = num(17, 2);
    if (!y || !mo || !d || !h || !mi || !se || *mo < 1 || *mo > 12 || *d < 1 || *d > 31 || *h > 23 || *mi > 59 ||
        *se > 60 || *h < 0 || *mi < 0 || *se < 0)
        return std::nullopt;
    std::tm tm{};
    tm.tm_year = static_cast<int>(*y) - 1900;
    tm.tm_mon = static_cast<int>(*mo) - 1;
    tm.tm_mday = static_cast<int>(*d);
    tm.tm_hour = static_cast<int>(*h);
    tm.tm_min = static_cast<int>(*mi);
    tm.tm_sec = static_cast<int>(*se);
    tm.tm_isdst = -1;  // Slurm writes local time; let the C library decide about DST
    std::time_t t = std::mktime(&tm);
    if (t == static_cast<std::time_t>(-1)) return std::nullopt;
    return static_cast<double>(t);
}

std::optional<double> parse_slurm_duration(std::string_view s) {
    s = trim(s);
    if (s.empty()) return std::nullopt;
    long long days = 0;
    bool has_days = false;
    if (auto dash = s.find('-'); dash != std::string_view::npos) {
        auto d = parse_int(s.substr(0, dash));
        if (!d || *d < 0) return std::nullopt;
        days = *d;
        has_days = true;
        s.remove_prefix(dash + 1);
    }
    auto parts = split(s, ':');
    std::vector<long long> v;
    for (auto p : parts) {
        auto n = parse_int(p);
        if (!n || *n < 0) return std::nullopt;
        v.push_back(*n);
    }
    double secs = 0;
    if (has_days) {
        // D-HH, D-HH:MM, D-HH:MM:SS
        if (v.size() > 3) return std::nullopt;
        secs = static_cast<double>(v[0]) * 3600 + (v.size() > 1 ? static_cast<double>(v[1]) * 60 : 0) +
               (v.size() > 2 ? static_cast<double>(v[2]) : 0);
    } else if (v.size() == 1) {
        secs = static_cast<double>(v[0]) * 60;  // MM
    } else if (v.size() == 2) {
        secs = static_cast<double>(v[0]) * 60 + static_cast<double>(v[1]);  // MM:SS
    } else if (v.size() == 3) {
        secs = static_cast<double>(v[0]) * 3600 + static_cast<double>(v[1]) * 60 + static_cast<double>(v[2]);
    } else {
        return std::nullopt;
    }
    return static_cast<double>(days) * 86400 + secs;
}

std::optional<int> tres_gpus(std::string_view tres) {
    tres = trim(tres);
    if (tres.empty()) return 0;
    std::optional<long long> untyped;
    long long typed = 0;
    for (auto item : split(tres, ',')) {
        item = trim(item);
        auto eq = item.find('=');
        if (eq == std::string_view::npos) continue;
        auto key = item.substr(0, eq);
        if (key != "gres/gpu" && key.substr(0, 9) != "gres/gpu:") continue;
        auto n = parse_int(item.substr(eq + 1));
        if (!n || *n < 0 || *n > kMaxCount) return std::nullopt;
        if (key == "gres/gpu")
            untyped = *n;
        else
            typed += *n;
    }
    const long long gpus = untyped ? *untyped : typed;
    if (gpus > kMaxCount) return std::nullopt;
    return static_cast<int>(gpus);
}

bool next_line(std::istream& in, std::string& line) {
    if (!std::getline(in, line)) return false;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    return true;
}

}  // namespace coloc::replay
