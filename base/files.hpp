// Opening the files the tools read and write, with the reason when that fails.
#pragma once

#include <fstream>
#include <string>

namespace coloc::base {

// Opens `path` for reading into `in`; "" on success, else why not ("cannot open: No such file or
// directory", "is a directory, not a file"), for messages of the form "PATH: reason".
std::string open_for_reading(std::ifstream& in, const std::string& path);

// Opens `path` for writing (truncating) into `out`; "" on success, else why not.
std::string open_for_writing(std::ofstream& out, const std::string& path);

// Replaces `path` with `text` at once (a reader sees the old file or the new, never a part),
// with permissions `mode`; "" on success, else why not.
std::string replace_file(const std::string& path, const std::string& text, unsigned mode);

// The OS's reason for the last failure (strerror(errno)), or `fallback` when errno says nothing.
std::string os_reason(const char* fallback = "unknown error");

}  // namespace coloc::base
