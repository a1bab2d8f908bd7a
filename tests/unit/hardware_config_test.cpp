// colocd.yaml's hardware: each node type's GPU type and memory, and model_params per GPU type.
#include <doctest/doctest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "config/config.hpp"
#include "model/coloc_model.hpp"
#include "tests/unit/test_env.hpp"

using namespace coloc;
using namespace coloc::daemon;

namespace {

std::string with_types(const std::string& types, const std::string& extra = "") {
    return "node_types:\n" + types +
           "nodes:\n  - { names: \"v[1-2]\", type: old }\n  - { names: \"a1\", type: new }\n" + extra;
}

const char* kTwoTypes = R"(  old: { gpus: 4, gpu_type: v100, gpu_memory_gb: 32 }
  new:
    gpus: 8
    gpu_type: a100
    gpu_memory_gb: 80
)";

std::string error_of(const std::string& text) {
    try {
        parse_config(text, "colocd.yaml");
    } catch (const ConfigError& e) {
        return e.what();
    }
    return "no error";
}

std::string params_file(const std::string& gpu_type) {
    model::ColocParams p;
    p.gpu_type = gpu_type;
    p.gpu.family_penalty = 7;
    const std::string path = test::scratch("params-" + gpu_type + ".json");
    std::ofstream(path) << model::ColocModel(model::ProfileCatalogue{}, p).params_json().dump(2);
    return path;
}

}  // namespace

TEST_CASE("config: each node type names its GPU type and memory") {
    const Config c = parse_config(with_types(kTwoTypes), "colocd.yaml");
    CHECK(c.topology.type_of(0).gpu == model::GpuHardware{"v100", 32});
    CHECK(c.topology.type_of(2).gpu == model::GpuHardware{"a100", 80});
    CHECK(place::gpu_hardware(c.topology) == std::vector<model::GpuHardware>{{"v100", 32}, {"a100", 80}});
    CHECK(c.notes.empty());
}

TEST_CASE("config: a node type without GPU type or memory gets the defaults, and a note says so") {
    const Config c =
        parse_config(with_types("  old: { gpus: 4 }\n  new: { gpus: 8, gpu_type: a100 }\n"), "colocd.yaml");
    CHECK(c.topology.type_of(0).gpu == model::GpuHardware{});
    CHECK(c.topology.type_of(2).gpu.gpu_type == "a100");
    REQUIRE(c.notes.size() == 2);
    CHECK(c.notes[0] == "colocd.yaml: node type 'old' names no gpu_type and gpu_memory_gb: v100 with 32 GB assumed");
    CHECK(c.notes[1] == "colocd.yaml: node type 'new' names no gpu_memory_gb: a100 with 32 GB assumed");
}

TEST_CASE("config: bad GPU types and memory are named with file, line and key") {
    CHECK(error_of(with_types("  old: { gpus: 4, gpu_type: V100 }\n  new: { gpus: 8 }\n")) ==
          "colocd.yaml:2: key 'node_types.old.gpu_type': 'V100' is not a GPU type (lower-case letters, digits, '-' "
          "or '_', as in v100, a100-80gb)");
    CHECK(error_of(with_types("  old: { gpus: 4 }\n  new:\n    gpus: 8\n    gpu_memory_gb: lots\n")) ==
          "colocd.yaml:5: key 'node_types.new.gpu_memory_gb': 'lots' is not a number");
    CHECK(error_of(with_types("  old: { gpus: 4, gpu_memory_gb: 0 }\n  new: { gpus: 8 }\n")) ==
          "colocd.yaml:2: key 'node_types.old.gpu_memory_gb': 0 is outside 0.5..65536");
}

TEST_CASE("config: model_params loads colocctl fit's parameters per GPU type") {
    const std::string a100 = params_file("a100");
    const Config c = parse_config(with_types(kTwoTypes, "model_params:\n  a100: " + a100 + "\n"), "colocd.yaml");
    REQUIRE(c.model_params.count("a100"));
    CHECK(c.model_params_files.at("a100") == a100);
    CHECK(model::learned_gpu_params(c.model_params).at("a100").family_penalty == 7);
}

TEST_CASE("config: model_params errors name the line, the GPU type and the file") {
    const std::string v100 = params_file("v100");
    CHECK(error_of(with_types(kTwoTypes, "model_params:\n  a100: " + v100 + "\n")) ==
          "colocd.yaml:11: key 'model_params.a100': " + v100 +
              ": parameters fitted for GPU type 'v100', not 'a100' (colocctl fit --gpu-type a100)");
    CHECK(error_of(with_types(kTwoTypes, "model_params:\n  h100: " + v100 + "\n")) ==
          "colocd.yaml:11: key 'model_params.h100': no node type has gpu_type 'h100'");
    const std::string missing = test::scratch("none.json");
    CHECK(error_of(with_types(kTwoTypes, "model_params:\n  a100: " + missing + "\n"))
              .rfind("colocd.yaml:11: key 'model_params.a100': " + missing + ": cannot open", 0) == 0);
    const std::string junk = test::scratch("junk.json");
    std::ofstream(junk) << "{ not json";
    CHECK(error_of(with_types(kTwoTypes, "model_params:\n  a100: " + junk + "\n"))
              .rfind("colocd.yaml:11: key 'model_params.a100': " + junk + ": not JSON", 0) == 0);
    CHECK(error_of(with_types(kTwoTypes, "model_params: [a100]\n")) ==
          "colocd.yaml:10: key 'model_params': expected a mapping of GPU type to a parameters file");
}
