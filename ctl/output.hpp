// colocctl output in Slurm's manner: padded columns with a header, `-P` '|'-separated,
// `-h` without header, `-o` choosing fields, `--json` as {"meta","errors",<records>}.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "ctl/options.hpp"
#include "proto/ops.hpp"

namespace coloc::ctl {

using json = nlohmann::json;

struct Field {
    const char* name;    // for -o and the JSON key it reads
    const char* header;  // column title
    bool right = false;  // numbers align right
};

// Prints `records` (JSON objects) as a table of `fields` (or the -o selection). Returns the
// exit code: 2 when -o names an unknown field.
int print_records(const CtlOptions& opts, const std::string& kind, const json& records,
                  const std::vector<Field>& fields, const std::string& default_fields);

// Prints the JSON envelope for --json output.
void print_json(const std::string& command, const std::string& kind, const json& records, const json& errors);

// How a value reads in a table: ISO local time for *time fields, lists joined by commas.
std::string cell(const std::string& field, const json& value);
std::string iso_time(std::int64_t epoch);

// A request for `op`, named as colocd's route table names it; its fields are added to it.
json op_request(proto::Op op);

// Calls colocd; throws proto::ProtoError (its code and message) when there is no good reply.
json ask_daemon(const CtlOptions& opts, json request);

// Calls colocd and handles errors the same way for every read command: returns the reply or
// prints the error (stderr, or the JSON envelope) and sets exit_code.
bool call_daemon(const CtlOptions& opts, const std::string& command, const std::string& kind, json request, json& reply,
                 int& exit_code);

}  // namespace coloc::ctl
