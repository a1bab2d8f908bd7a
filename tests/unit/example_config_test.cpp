// The example configuration that `make install` and the package ship must load.
#include <doctest/doctest.h>
#include <filesystem>

#include "config/config.hpp"

using namespace coloc::daemon;

TEST_CASE("etc/colocd.yaml, the shipped example, is a valid configuration") {
    // Unit tests run from the repository root (make unit-test); fall back to this file's place.
    std::filesystem::path path = "etc/colocd.yaml";
    if (!std::filesystem::exists(path)) path = std::filesystem::path(__FILE__).parent_path() / "../../etc/colocd.yaml";
    const Config cfg = load_config(path.string());
    CHECK(cfg.listen == std::vector<std::string>{"ipc:///run/coloc/colocd.sock"});
    CHECK(cfg.database == "/var/lib/coloc/coloc.db");
    CHECK(cfg.profiles == "/etc/coloc/profiles.yaml");  // installed beside it
    CHECK(cfg.topology.nodes().size() == 36);
    CHECK(cfg.partition_modes.at("shared") == coloc::proto::GpuMode::Bind);
    CHECK(cfg.node_modes.at("small01") == coloc::proto::GpuMode::Observe);
}
