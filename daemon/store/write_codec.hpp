// A history write as text, for the journal (daemon/store/journal.hpp): each kind of write with
// its fields by name, so that a journal written by one colocd is read by the next.
#pragma once

#include <string>
#include <string_view>

#include "daemon/store/backlog.hpp"

namespace coloc::daemon {

std::string encode_write(const StoreWrite& write);
// Throws StoreError naming what is wrong with `text`.
StoreWrite decode_write(std::string_view text);

}  // namespace coloc::daemon
