// What a place request learnt: colocd's answer or why there is none, and Slurm's slot count when
// the plugin had to ask for it. The slot lookup runs in a forked child (spank/bounded_child.hpp),
// which hands this message to the parent as one line on its pipe.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "proto/messages.hpp"

namespace coloc::spank {

// Why there is no reply from colocd.
enum class ExchangeError {
    None,         // a reply, nothing to ask (skip), or not that far yet
    NotRunning,   // the ipc:// socket file is missing: colocd is not running
    Unavailable,  // no answer within the deadline, or no time left to ask
    BadReply,     // the reply is not colocd's, or its fields do not decode
    Refused,      // colocd answered ok:false; `code` is its error code
    Internal,     // anything else (munge, ZeroMQ, ...)
};

// "none", "not_running", "unavailable", "bad_reply", "refused", "internal".
const char* error_name(ExchangeError error);

struct ExchangeMessage {
    int slots = -1;         // Slurm's bind slots for the job here; -1 = not looked up, or unknown
    std::string slots_why;  // why unknown
    bool skip = false;      // no bind slots here: nothing to place
    std::optional<proto::PlaceReply> reply;
    ExchangeError error = ExchangeError::None;
    std::string code;     // Refused: colocd's error code
    std::string message;  // for people: what went wrong
};

// One line without '\n'. decode returns nullopt for anything encode did not write.
std::string encode(const ExchangeMessage& m);
std::optional<ExchangeMessage> decode(std::string_view line);

}  // namespace coloc::spank
