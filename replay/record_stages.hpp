// What a reader's stages share: each reads part of one record into the job and returns false
// once it has said why the record is dropped (a skip, or a malformed field at the record's line).
#pragma once

#include <cstddef>
#include <string>

#include "replay/reader_context.hpp"

namespace coloc::replay {

class RecordStages {
public:
    TraceJob job;

protected:
    RecordStages(ReaderContext& ctx, std::size_t lineno) : ctx_(ctx), lineno_(lineno) { job.line = lineno; }
    bool skip(const std::string& reason) {
        ctx_.skip(reason);
        return false;
    }
    bool bad(const std::string& why) {
        ctx_.bad(lineno_, why);
        return false;
    }

    ReaderContext& ctx_;
    std::size_t lineno_;
};

}  // namespace coloc::replay
