// The C entry point of spank_coloc_net.so: the part of the plugin that links ZeroMQ and munge.
// slurmstepd loads spank_coloc.so for every step and srun loads it too, and those libraries
// (with their own dependencies) cost milliseconds to load on each; spank_coloc.so loads this
// object only when a step asks colocd (spank/net_call.hpp), so later steps and srun pay nothing.
#pragma once

extern "C" {

// One bounded call (spank/bounded_seal.hpp, proto::call_sealed). Returns 0 with the reply object
// in *reply, or non-zero with colocd's or the transport's error code in *code and the reason in
// *message. `server_key` is colocd's public CURVE key, "" for none. The strings are malloc'd; the
// caller frees them. Never throws.
int coloc_net_call(const char* endpoint, const char* body, const char* munge_socket, const char* server_key,
                   int timeout_ms, double* munge_ms, char** reply, char** code, char** message);

}  // extern "C"
