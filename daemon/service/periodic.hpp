// Work a part of the service does between requests, on the serving thread: colocd's loop
// (daemon/server.cpp) runs every part's in turn after each poll. None may wait for Slurm or
// for the disk for long, since requests wait meanwhile.
#pragma once

#include <cstdint>

namespace coloc::daemon {

class Periodic {
public:
    virtual ~Periodic() = default;
    // Does what is due by `now_ms` (a steady clock in milliseconds), if anything.
    virtual void run_due(std::int64_t now_ms) = 0;
};

}  // namespace coloc::daemon
