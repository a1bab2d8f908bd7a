#include <doctest/doctest.h>

#include "spank/plugin_args.hpp"
#include "spank/user_options.hpp"

using namespace coloc::spank;

TEST_CASE("spank: no plugstack arguments give the documented defaults") {
    ParsedArgs p = parse_plugin_args({});
    CHECK(p.errors.empty());
    CHECK(p.config.endpoint == "ipc:///run/coloc/colocd.sock");
    CHECK(p.config.timeout_ms == 250);
    CHECK_FALSE(p.config.mode.has_value());
    CHECK(p.config.gpus == 0);
    CHECK(p.config.slots_per_gpu == 0);
    CHECK(p.config.state_dir == "/run/coloc-node");
    CHECK(p.config.munge_socket.empty());
    CHECK_FALSE(p.config.bind_fallback_possible());
}

TEST_CASE("spank: every plugstack argument is read") {
    ParsedArgs p =
        parse_plugin_args({"endpoint=tcp://10.0.0.1:7777", "timeout_ms=100", "mode=bind", "gpus=8", "slots_per_gpu=2",
                           "state_dir=/var/run/x", "munge_socket=/m/s", "slot_gres=gpushare", "cluster=alpha-1"});
    CHECK(p.errors.empty());
    CHECK(p.config.endpoint == "tcp://10.0.0.1:7777");
    CHECK(p.config.timeout_ms == 100);
    CHECK(p.config.mode == coloc::proto::GpuMode::Bind);
    CHECK(p.config.gpus == 8);
    CHECK(p.config.slots_per_gpu == 2);
    CHECK(p.config.state_dir == "/var/run/x");
    CHECK(p.config.munge_socket == "/m/s");
    CHECK(p.config.slot_gres == "gpushare");
    CHECK(p.config.cluster == "alpha-1");
    CHECK(p.config.bind_fallback_possible());
}

TEST_CASE("spank: bad plugstack arguments are reported together and keep their defaults") {
    ParsedArgs p = parse_plugin_args({"timeout_ms=abc", "timeout_ms=0", "timeout_ms=99999", "mode=fast", "gpus=-1",
                                      "frobnicate=1", "verbose", "endpoint=http://x", "state_dir=relative",
                                      "timeout_ms=12x", "gpus=", "cluster=a b"});
    CHECK(p.errors.size() == 12);
    CHECK(p.config.cluster.empty());
    CHECK(p.config.timeout_ms == 250);
    CHECK_FALSE(p.config.mode.has_value());
    CHECK(p.config.gpus == 0);
    CHECK(p.config.endpoint == "ipc:///run/coloc/colocd.sock");
    CHECK(p.config.state_dir == "/run/coloc-node");
    std::string line = join_errors(p.errors);
    CHECK(line.find('\n') == std::string::npos);
    CHECK(line.find("frobnicate=1 (unknown argument)") != std::string::npos);
    CHECK(line.find("timeout_ms=abc (not an integer)") != std::string::npos);
    CHECK(line.find("verbose (expected key=value)") != std::string::npos);
}

TEST_CASE("spank: a good argument after a bad one still counts") {
    ParsedArgs p = parse_plugin_args({"timeout_ms=x", "timeout_ms=40"});
    CHECK(p.errors.size() == 1);
    CHECK(p.config.timeout_ms == 40);
}

TEST_CASE("spank: --coloc and --coloc-profile values") {
    UserOptions o;
    CHECK(set_switch(o, "off").empty());
    CHECK(o.off);
    CHECK(set_switch(o, "on").empty());
    CHECK_FALSE(o.off);
    CHECK_FALSE(set_switch(o, "maybe").empty());
    CHECK_FALSE(set_switch(o, nullptr).empty());
    CHECK_FALSE(o.off);

    CHECK(set_profile(o, "resnet50.fp16-v2").empty());
    CHECK(o.profile == "resnet50.fp16-v2");
    CHECK_FALSE(set_profile(o, "").empty());
    CHECK_FALSE(set_profile(o, "a b").empty());
    CHECK_FALSE(set_profile(o, std::string(65, 'x').c_str()).empty());
    CHECK(o.profile == "resnet50.fp16-v2");
}
