// What the forked child of a place request tells the parent over its pipe: one typed message,
// written whole again each time the child learns more (the slot count, then colocd's answer), so
// that a child killed at the deadline still leaves what it had learnt. One line on the pipe.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "proto/messages.hpp"

namespace coloc::spank {

// Why the child has no reply for the parent.
enum class ExchangeError {
    None,         // a reply, nothing to ask (skip), or not that far yet
    NotRunning,   // the ipc:// socket file is missing: colocd is not running
    Unavailable,  // no answer within the deadline, or no time left to ask
    BadReply,     // the reply is not colocd's, or its fields do not decode
    Refused,      // colocd answered ok:false; `code` is its error code
    Internal,     // anything else in the child (munge, ZeroMQ, ...)
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
