// What every reader does with a record: keep it, skip it for a reason, or reject it as malformed
// (fail, or count it under skip_bad).
#pragma once

#include <string>

#include "replay/trace.hpp"

namespace coloc::replay {

class ReaderContext {
public:
    ReaderContext(Trace& trace, const ReadOptions& options) : trace_(trace), options_(options) {}

    // A malformed record at `line`: throws TraceError unless skip_bad, else counts it.
    void bad(std::size_t line, const std::string& why);
    // A well-formed record that is not replayed.
    void skip(const std::string& reason) { ++trace_.skipped[reason]; }
    // A record kept with a stand-in value.
    void note(const std::string& what) { ++trace_.notes[what]; }
    void record() { ++trace_.records; }
    void keep(TraceJob job) { trace_.jobs.push_back(std::move(job)); }
    // A whole-file problem (no header, wrong header): always fatal.
    [[noreturn]] void fatal(std::size_t line, const std::string& why) const;
    const std::string& source() const { return trace_.source; }

private:
    Trace& trace_;
    const ReadOptions& options_;
};

}  // namespace coloc::replay
