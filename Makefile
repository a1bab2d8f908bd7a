# coloc: interference-aware placement of GPU training jobs on Slurm.
# `make` builds everything into build/; `make check` runs unit + integration tests (both also
# against ASan + UBSan builds);
# `make demo` runs the main job on the embedded default; `make bench` runs the benchmarks.

CXX      ?= g++
CXXSTD   := -std=c++20
WARN     := -Wall -Wextra -Werror
OPT      ?= -O2 -g
CPPFLAGS += -I. -MMD -MP
CXXFLAGS += $(CXXSTD) $(WARN) $(OPT) -fPIC
LDLIBS_CORE := -lzmq -lsqlite3 -lyaml-cpp -lmunge -lsodium
LDLIBS_SLURM := -lslurm

BUILD    := build
SAN_BUILD := $(BUILD)/san
SANFLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined

PREFIX   ?= /usr/local
SHELL    := /bin/bash

# The shared library: wire protocol, model, placement engine, replay.
CORE_SRC := $(wildcard proto/*.cpp model/*.cpp model/io/*.cpp place/*.cpp replay/*.cpp)
# The daemon side: config, store, server, handlers, CLI commands.
DAEMON_SRC := $(filter-out daemon/colocd_main.cpp daemon/colocctl_main.cpp,$(wildcard daemon/*.cpp))
SPANK_SRC := $(wildcard spank/*.cpp)
UNIT_SRC := $(wildcard tests/unit/*.cpp)
BENCH_SRC := $(wildcard bench/*.cpp)

obj = $(patsubst %.cpp,$(1)/obj/%.o,$(2))

CORE_OBJ   := $(call obj,$(BUILD),$(CORE_SRC))
DAEMON_OBJ := $(call obj,$(BUILD),$(DAEMON_SRC))
SPANK_OBJ  := $(call obj,$(BUILD),$(SPANK_SRC))
UNIT_OBJ   := $(call obj,$(BUILD),$(UNIT_SRC))

SAN_CORE_OBJ   := $(call obj,$(SAN_BUILD),$(CORE_SRC))
SAN_DAEMON_OBJ := $(call obj,$(SAN_BUILD),$(DAEMON_SRC))
SAN_UNIT_OBJ   := $(call obj,$(SAN_BUILD),$(UNIT_SRC))

BENCH_BIN := $(patsubst bench/%.cpp,$(BUILD)/bench/%,$(BENCH_SRC))

.PHONY: all check unit-test integration-test san-test demo bench deps clean format
all: $(BUILD)/colocd $(BUILD)/colocctl $(BUILD)/spank_coloc.so $(BUILD)/unit-tests $(BENCH_BIN)

$(BUILD)/libcoloc.a: $(CORE_OBJ) $(DAEMON_OBJ)
	@mkdir -p $(@D)
	$(AR) rcs $@ $^

$(BUILD)/colocd: $(BUILD)/obj/daemon/colocd_main.o $(BUILD)/libcoloc.a
	$(CXX) $(CXXFLAGS) -o $@ $^ $(LDLIBS_CORE) $(LDLIBS_SLURM)

$(BUILD)/colocctl: $(BUILD)/obj/daemon/colocctl_main.o $(BUILD)/libcoloc.a
	$(CXX) $(CXXFLAGS) -o $@ $^ $(LDLIBS_CORE) $(LDLIBS_SLURM)

# The plugin links only what it needs and exports only the SPANK symbols.
SPANK_CORE_OBJ := $(call obj,$(BUILD),$(wildcard proto/*.cpp))
$(BUILD)/spank_coloc.so: $(SPANK_OBJ) $(SPANK_CORE_OBJ) spank/spank_coloc.map
	$(CXX) $(CXXFLAGS) -shared -Wl,--version-script=spank/spank_coloc.map -Wl,-z,defs \
	    -o $@ $(SPANK_OBJ) $(SPANK_CORE_OBJ) -lzmq -lmunge -lsodium -lslurm -static-libstdc++ -static-libgcc

$(BUILD)/unit-tests: $(UNIT_OBJ) $(BUILD)/libcoloc.a
	$(CXX) $(CXXFLAGS) -o $@ $^ $(LDLIBS_CORE) $(LDLIBS_SLURM)

# Concurrent place/started/ended clients that record what colocd acknowledged (crash test).
$(BUILD)/tests/coloc-load: $(BUILD)/obj/tests/load/coloc_load.o $(BUILD)/libcoloc.a
	@mkdir -p $(@D)
	$(CXX) $(CXXFLAGS) -o $@ $^ $(LDLIBS_CORE) $(LDLIBS_SLURM) -pthread

# Sends one request as the calling user: the authorisation tests act as users colocd must refuse.
$(BUILD)/tests/coloc-send: $(BUILD)/obj/tests/tools/coloc_send.o $(BUILD)/libcoloc.a
	@mkdir -p $(@D)
	$(CXX) $(CXXFLAGS) -o $@ $^ $(LDLIBS_CORE) $(LDLIBS_SLURM)

$(BUILD)/bench/%: $(BUILD)/obj/bench/%.o $(BUILD)/libcoloc.a
	@mkdir -p $(@D)
	$(CXX) $(CXXFLAGS) -o $@ $^ $(LDLIBS_CORE) $(LDLIBS_SLURM)

$(BUILD)/obj/%.o: %.cpp
	@mkdir -p $(@D)
	$(CXX) $(CPPFLAGS) $(CXXFLAGS) -c -o $@ $<

# Sanitized build of the unit tests (ASan + UBSan).
$(SAN_BUILD)/obj/%.o: %.cpp
	@mkdir -p $(@D)
	$(CXX) $(CPPFLAGS) $(CXXFLAGS) -O1 $(SANFLAGS) -c -o $@ $<

$(SAN_BUILD)/unit-tests: $(SAN_UNIT_OBJ) $(SAN_CORE_OBJ) $(SAN_DAEMON_OBJ)
	$(CXX) $(CXXFLAGS) $(SANFLAGS) -o $@ $^ $(LDLIBS_CORE) $(LDLIBS_SLURM)

deps:
	@scripts/install-deps

# Unit tests need a munged; tests/unit-run starts a private one.
unit-test: $(BUILD)/unit-tests
	tests/unit-run $(BUILD)/unit-tests

# colocd and colocctl with ASan + UBSan, for san-integration-test.
$(SAN_BUILD)/colocd $(SAN_BUILD)/colocctl: $(SAN_BUILD)/%: $(SAN_BUILD)/obj/daemon/%_main.o $(SAN_CORE_OBJ) $(SAN_DAEMON_OBJ)
	$(CXX) $(CXXFLAGS) $(SANFLAGS) -o $@ $^ $(LDLIBS_CORE) $(LDLIBS_SLURM)

san-test: $(SAN_BUILD)/unit-tests
	ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 tests/unit-run $(SAN_BUILD)/unit-tests

integration-test: all $(BUILD)/tests/coloc-load $(BUILD)/tests/coloc-send
	COLOC_BUILD_DIR=$(BUILD) tests/integration/run

# The same suite against colocd and colocctl built with ASan + UBSan; a report fails it.
san-integration-test: all $(BUILD)/tests/coloc-load $(BUILD)/tests/coloc-send $(SAN_BUILD)/colocd $(SAN_BUILD)/colocctl
	COLOC_BUILD_DIR=$(BUILD) COLOC_SANITIZED_DIR=$(SAN_BUILD) tests/integration/run

check: deps
	$(MAKE) all
	$(MAKE) san-test
	$(MAKE) unit-test
	$(MAKE) fuzz-check
	$(MAKE) integration-test
	$(MAKE) san-integration-test
	$(MAKE) install-test

demo: deps
	$(MAKE) $(BUILD)/colocd $(BUILD)/colocctl $(BUILD)/spank_coloc.so
	scripts/demo

bench: all
	@for b in bench/*; do \
	    case $$b in *.cpp|*.hpp|*.md) continue;; esac; \
	    [ -x $$b ] && { echo "== $$b"; BUILD=$(BUILD) $$b || exit 1; }; \
	done

format:
	clang-format -i $$(git ls-files '*.cpp' '*.hpp')

clean:
	rm -rf $(BUILD)

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)

# install, uninstall, deb, install-test
include mk/install.mk
# fuzz, fuzz-check (libFuzzer targets in tests/fuzz/)
include mk/fuzz.mk
