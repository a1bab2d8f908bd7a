// Trace readers, one per log format, and the format detection.
//
// Every reader names the file and line of a malformed record; with ReadOptions::skip_bad it skips
// and counts such records instead (Trace::bad, Trace::bad_lines). Well-formed records that cannot
// be replayed (job steps, jobs that never started or are still running) are counted by reason in
// Trace::skipped, never dropped silently. Field lists: man/colocctl.1 (REPLAY INPUT FORMATS).
#pragma once

#include <iosfwd>
#include <optional>
#include <string>

#include "replay/trace.hpp"

namespace coloc::replay {

// sacct -P (or -p) with its header line. Needs JobIDRaw or JobID, Submit or Start, AllocTRES or
// ReqTRES, and ElapsedRaw, Elapsed or Start+End; reads JobName, User, Partition, Start, End,
// TimelimitRaw or Timelimit, NNodes, NCPUS, State, NodeList, and Comment (a
// "coloc-profile=NAME" in it names the job's profile) when present. Recommended:
//   sacct -a -X -P -S START -E END --format=JobIDRaw,JobName,User,Partition,Submit,Start,End,
//         ElapsedRaw,TimelimitRaw,NNodes,NCPUS,AllocTRES,ReqTRES,State,NodeList
void read_sacct(std::istream& in, Trace& trace, const ReadOptions& options);
// Slurm's jobcomp/filetxt log (22.05: "JobId=... UserId=name(uid) ... Tres=... ExitCode=...").
void read_jobcomp(std::istream& in, Trace& trace, const ReadOptions& options);
// `colocctl history --export`: JSON Lines after a {"format":"coloc-history","version":1} line.
void read_coloc_history(std::istream& in, Trace& trace, const ReadOptions& options);
// Standard Workload Format (18 fields; processors are read as GPUs).
void read_swf(std::istream& in, Trace& trace, const ReadOptions& options);
// Philly/Helios-style CSV with a header (gpu_num, submit_time or interval, duration or run_time...).
void read_helios(std::istream& in, Trace& trace, const ReadOptions& options);
// Gavel's 7-field tab-separated trace (job type, command, steps argument, needs data dir, total
// steps, arrival time, scale factor). Run times come later, from a throughput table.
void read_gavel(std::istream& in, Trace& trace, const ReadOptions& options);
// Tiresias' CSV: job_id,num_gpu,submit_time,iterations,model_name,duration,interval.
void read_tiresias(std::istream& in, Trace& trace, const ReadOptions& options);

// The format of a log from its first lines; nullopt when it cannot tell.
std::optional<TraceFormat> detect_format(const std::string& head);

// Reads a whole log; `format` nullopt = detect it (throws TraceError naming the formats when it
// cannot). `source` names the input in messages.
Trace read_trace(std::istream& in, std::optional<TraceFormat> format, const std::string& source,
                 const ReadOptions& options = {});
Trace read_trace_file(const std::string& path, std::optional<TraceFormat> format, const ReadOptions& options = {});

}  // namespace coloc::replay
