// The options every colocctl subcommand shares, for the code that runs them (ctl/commands.hpp
// registers the subcommands).
#pragma once

#include <string>

namespace coloc::ctl {

// Options common to every subcommand (set by the top-level flags and environment).
struct CtlOptions {
    std::string endpoint;      // --endpoint, COLOC_ENDPOINT, else the default ipc socket
    std::string munge_socket;  // COLOC_MUNGE_SOCKET, else munge's default
    int timeout_ms = 5000;     // --timeout
    bool json = false;         // --json
    bool parsable = false;     // -P/--parsable2: '|'-separated, no padding
    bool noheader = false;     // -h/--noheader
    std::string format;        // -o/--format field list, COLOCCTL_FORMAT
    std::string cluster;       // -M/--cluster, COLOC_CLUSTER: colocd refuses when it serves another
    // --server-key, COLOC_SERVER_KEY, else /etc/coloc/colocd.pub when it exists: colocd's public
    // CURVE key; empty = replies unauthenticated.
    std::string server_key_file{};
};

}  // namespace coloc::ctl
