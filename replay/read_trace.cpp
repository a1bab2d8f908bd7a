#include <algorithm>
#include <cctype>
#include <fstream>
#include <sstream>

#include "base/files.hpp"
#include "replay/readers.hpp"
#include "replay/text.hpp"

namespace coloc::replay {

namespace {

bool all_numbers(const std::vector<std::string_view>& f) {
    return std::all_of(f.begin(), f.end(), [](std::string_view s) { return parse_number(s).has_value(); });
}

}  // namespace

std::optional<TraceFormat> detect_format(const std::string& head) {
    std::istringstream in(head);
    std::string line;
    while (next_line(in, line)) {
        auto t = trim(line);
        if (t.empty()) continue;
        std::string l = lower(t);
        if (t.front() == '{') {
            if (l.find("\"coloc-history\"") != std::string::npos) return TraceFormat::ColocHistory;
            return std::nullopt;
        }
        if (t.front() == ';') return TraceFormat::Swf;
        if (t.find("JobId=") != std::string_view::npos && t.find("JobState=") != std::string_view::npos)
            return TraceFormat::Jobcomp;
        if (t.find('|') != std::string_view::npos && l.find("jobid") != std::string::npos) return TraceFormat::Sacct;
        if (auto csv = split_csv(l); csv && csv->size() > 2) {
            auto has = [&](const char* c) { return std::find(csv->begin(), csv->end(), c) != csv->end(); };
            if (has("model_name") && has("num_gpu") && has("iterations")) return TraceFormat::Tiresias;
            if (has("gpu_num") || has("num_gpu") || has("num_gpus")) return TraceFormat::Helios;
        }
        auto tabs = split(t, '\t');
        if (tabs.size() == 7 && parse_number(tabs[4]) && parse_number(tabs[5]) && parse_int(tabs[6]))
            return TraceFormat::Gavel;
        auto blanks = split_blanks(t);
        if (blanks.size() == 18 && all_numbers(blanks)) return TraceFormat::Swf;
        return std::nullopt;
    }
    return std::nullopt;
}

Trace read_trace(std::istream& in, std::optional<TraceFormat> format, const std::string& source,
                 const ReadOptions& options) {
    Trace trace;
    trace.source = source;
    if (!format) {
        // Sniff the first lines, then read the whole stream from the start.
        std::string head, line;
        for (int i = 0; i < 20 && std::getline(in, line); ++i) head += line + "\n";
        format = detect_format(head);
        if (!format)
            throw TraceError(source,
                             "cannot tell the format from the content; give --format with one of: " + format_names());
        std::string rest((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        std::istringstream all(head + rest);
        return read_trace(all, format, source, options);
    }
    trace.format = *format;
    switch (*format) {
        case TraceFormat::Sacct:
            read_sacct(in, trace, options);
            break;
        case TraceFormat::Jobcomp:
            read_jobcomp(in, trace, options);
            break;
        case TraceFormat::ColocHistory:
            read_coloc_history(in, trace, options);
            break;
        case TraceFormat::Swf:
            read_swf(in, trace, options);
            break;
        case TraceFormat::Helios:
            read_helios(in, trace, options);
            break;
        case TraceFormat::Gavel:
            read_gavel(in, trace, options);
            break;
        case TraceFormat::Tiresias:
            read_tiresias(in, trace, options);
            break;
    }
    return trace;
}

Trace read_trace_file(const std::string& path, std::optional<TraceFormat> format, const ReadOptions& options) {
    std::ifstream in;
    if (auto why = base::open_for_reading(in, path); !why.empty()) throw TraceError(path, why);
    return read_trace(in, format, path, options);
}

}  // namespace coloc::replay
