#include "replay/trace.hpp"

#include "replay/reader_context.hpp"

namespace coloc::replay {

namespace {

struct FormatName {
    TraceFormat format;
    const char* name;
};

constexpr FormatName kFormats[] = {
    {TraceFormat::Sacct, "sacct"},
    {TraceFormat::Jobcomp, "jobcomp"},
    {TraceFormat::ColocHistory, "coloc-history"},
    {TraceFormat::Swf, "swf"},
    {TraceFormat::Helios, "helios"},
    {TraceFormat::Gavel, "gavel"},
    {TraceFormat::Tiresias, "tiresias"},
};

}  // namespace

const char* to_string(TraceFormat format) {
    for (const auto& f : kFormats)
        if (f.format == format) return f.name;
    return "?";
}

std::optional<TraceFormat> format_from_string(const std::string& name) {
    for (const auto& f : kFormats)
        if (name == f.name) return f.format;
    return std::nullopt;
}

std::string format_names() {
    std::string out;
    for (const auto& f : kFormats) out += (out.empty() ? "" : ", ") + std::string(f.name);
    return out;
}

TraceError::TraceError(const std::string& source, std::size_t line, const std::string& why)
    : std::runtime_error(source + ":" + std::to_string(line) + ": " + why), line_(line) {}

TraceError::TraceError(const std::string& source, const std::string& why) : std::runtime_error(source + ": " + why) {}

void ReaderContext::bad(std::size_t line, const std::string& why) {
    if (!options_.skip_bad) throw TraceError(trace_.source, line, why + " (--skip-bad skips and counts such lines)");
    ++trace_.bad;
    if (trace_.bad_lines.size() < options_.bad_lines_kept) trace_.bad_lines.push_back({line, why});
}

void ReaderContext::fatal(std::size_t line, const std::string& why) const {
    throw TraceError(trace_.source, line, why);
}

}  // namespace coloc::replay
