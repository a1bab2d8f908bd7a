// The plugin's call to colocd, through spank_coloc_net.so (spank/net_entry.hpp), which is
// loaded from beside spank_coloc.so the first time a step asks and stays loaded.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "proto/client.hpp"

namespace coloc::spank {

// As proto::call. Throws proto::ProtoError: colocd's or the transport's code, or `internal`
// naming the object and the reason when spank_coloc_net.so cannot be loaded.
nlohmann::json net_call(const std::string& endpoint, const nlohmann::json& body, const proto::CallOptions& options);

}  // namespace coloc::spank
