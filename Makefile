# coloc: interference-aware placement of GPU training jobs on Slurm.
# `make` builds everything into build/; `make check` runs the unit tests (also against ASan + UBSan
# builds, mk/sanitize.mk) and the integration tests (against the ASan + UBSan colocd); `make demo`
# runs the main job on the embedded default; `make bench` runs the benchmarks. Both use every
# core unless given -jN.

# Every core by itself: `make check` typed alone runs one job per core. A -jN on the command line
# wins (make 4.3 applies it over this), a sub-make shares its parent's jobs, and `make clean all`
# stays in order.
ifeq ($(MAKELEVEL)$(filter clean,$(MAKECMDGOALS)),0)
MAKEFLAGS += -j$(shell nproc)
endif

CXX      ?= g++
CXXSTD   := -std=c++20
WARN     := -Wall -Wextra -Werror
OPT      ?= -O2 -g
CPPFLAGS += -I. -MMD -MP
CXXFLAGS += $(CXXSTD) $(WARN) $(OPT) -fPIC
# Hardening of everything that ships (the plugin, the daemons, the client library, and the core
# library in them). _FORTIFY_SOURCE needs optimisation: an OPT ending in -O0 (or without -O) goes
# without it.
_coloc_last_opt := $(lastword $(filter -O%,$(OPT)))
HARDEN_CPPFLAGS := $(if $(filter-out -O0,$(_coloc_last_opt)),-D_FORTIFY_SOURCE=2)
HARDEN_CXXFLAGS := -fstack-protector-strong
HARDEN_LDFLAGS  := -Wl,-z,relro,-z,now
CPPFLAGS += $(HARDEN_CPPFLAGS)
CXXFLAGS += $(HARDEN_CXXFLAGS)
LDFLAGS  += $(HARDEN_LDFLAGS)
LDLIBS_CORE := -lzmq -lsqlite3 -lyaml-cpp -lmunge -lsodium -lprometheus-cpp-pull -lprometheus-cpp-core
LDLIBS_SLURM := -lslurm

BUILD    := build
# SLURM=DIR: build against another Slurm release, into build/slurm-<release>/ (check-slurm)
include mk/slurm.mk

PREFIX   ?= /usr/local
SHELL    := /bin/bash

# Three libraries, one per side of the architecture:
#   libcoloc_core   wire protocol, model, placement engine, replay, the Slurm adapters (slurm/)
#   libcolocd       the daemon's concerns: config, server, service, store, steering, metrics
#   libspank_logic  the plugin's logic without its SPANK entry points (the unit tests link it)
# base/: file helpers and limits every library sits on; config/: colocd.yaml's reader and the site
# check, which colocd and colocctl both link.
CORE_SRC := $(wildcard base/*.cpp proto/*.cpp model/*.cpp model/io/*.cpp place/*.cpp replay/*.cpp slurm/*.cpp config/*.cpp config/*/*.cpp)
DAEMON_SRC := $(filter-out daemon/colocd_main.cpp,$(wildcard daemon/*.cpp daemon/*/*.cpp))
CTL_SRC := $(wildcard ctl/*.cpp)
SPANK_LOGIC_SRC := $(filter-out spank/spank_coloc.cpp,$(wildcard spank/*.cpp))
CLIENT_SRC := $(wildcard client/*.cpp)
UNIT_SRC := $(wildcard tests/unit/*.cpp)
# Code only the tests and benchmarks use (reference implementations, simulators, fixtures).
TEST_SUPPORT_SRC := $(wildcard tests/support/*.cpp)
BENCH_SRC := $(wildcard bench/*.cpp)

obj = $(patsubst %.cpp,$(1)/obj/%.o,$(2))

CORE_OBJ   := $(call obj,$(BUILD),$(CORE_SRC))
DAEMON_OBJ := $(call obj,$(BUILD),$(DAEMON_SRC))
CTL_OBJ    := $(call obj,$(BUILD),$(CTL_SRC))
SPANK_LOGIC_OBJ := $(call obj,$(BUILD),$(SPANK_LOGIC_SRC))
UNIT_OBJ   := $(call obj,$(BUILD),$(UNIT_SRC))
CLIENT_OBJ := $(call obj,$(BUILD),$(CLIENT_SRC))
TEST_SUPPORT_OBJ := $(call obj,$(BUILD),$(TEST_SUPPORT_SRC))


BENCH_BIN := $(patsubst bench/%.cpp,$(BUILD)/bench/%,$(BENCH_SRC))

# Order matters to the linker: the daemon's library uses the core, the core uses nothing above it.
LIBS     := $(BUILD)/libspank_logic.a $(BUILD)/libcolocd.a $(BUILD)/libcoloc_core.a

.PHONY: all check check-build unit-test client-test integration-test demo bench deps clean format format-check slurm-headers-check
all: $(BUILD)/colocd $(BUILD)/colocctl $(BUILD)/spank_coloc.so $(BUILD)/libcoloc_report.so $(BUILD)/libcoloc_report.a $(BUILD)/unit-tests $(BENCH_BIN)

$(BUILD)/libcoloc_core.a: $(CORE_OBJ)
$(BUILD)/libcolocd.a: $(DAEMON_OBJ)
$(BUILD)/libspank_logic.a: $(SPANK_LOGIC_OBJ)
$(BUILD)/libcoloc_test_support.a: $(TEST_SUPPORT_OBJ)
%.a:
	@mkdir -p $(@D)
	rm -f $@
	$(AR) rcs $@ $^

# The data files the binaries carry (data/README.md): linked into the core library as bytes
# (symbols _binary_<path>_start/_end) and parsed at first use, like the same files on disk.
EMBED_DATA := data/gavel/solo.csv data/gavel/pairs.csv data/demo-trace.jsonl
$(BUILD)/libcoloc_core.a: $(patsubst %,$(BUILD)/obj/%.o,$(EMBED_DATA))
EMBED_OBJ := $(patsubst %,$(BUILD)/obj/%.o,$(EMBED_DATA))
$(BUILD)/obj/data/%.o: data/%
	@mkdir -p $(@D)
	$(LD) -r -b binary -z noexecstack -o $@ $<

$(BUILD)/colocd: $(BUILD)/obj/daemon/colocd_main.o $(LIBS)
	$(CXX) $(CXXFLAGS) $(LDFLAGS) -o $@ $^ $(LDLIBS_CORE) $(LDLIBS_SLURM)

$(BUILD)/colocctl: $(CTL_OBJ) $(LIBS)
	$(CXX) $(CXXFLAGS) $(LDFLAGS) -o $@ $^ $(LDLIBS_CORE) $(LDLIBS_SLURM)

# The plugin links only what it needs and exports only the SPANK symbols.
# ZeroMQ and munge are in spank_coloc_net.so, which it loads only when a step asks colocd:
# srun and every later step load spank_coloc.so alone (spank/net_entry.hpp).
$(BUILD)/spank_coloc.so: $(BUILD)/obj/spank/spank_coloc.o $(BUILD)/libspank_logic.a $(BUILD)/libcoloc_core.a spank/spank_coloc.map $(BUILD)/spank_coloc_net.so
	$(CXX) $(CXXFLAGS) $(LDFLAGS) -shared -Wl,--version-script=spank/spank_coloc.map -Wl,-z,defs \
	    -o $@ $(filter %.o %.a,$^) $(LDLIBS_SLURM) -static-libstdc++ -static-libgcc

$(BUILD)/spank_coloc_net.so: $(BUILD)/obj/spank/net_entry.o $(BUILD)/libspank_logic.a $(BUILD)/libcoloc_core.a spank/spank_coloc_net.map
	$(CXX) $(CXXFLAGS) $(LDFLAGS) -shared -Wl,--version-script=spank/spank_coloc_net.map -Wl,-z,defs \
	    -o $@ $(filter %.o %.a,$^) -lzmq -lmunge -lsodium -static-libstdc++ -static-libgcc

# The library a training job reports its iteration times with (client/coloc_report.h): it
# exports only the C API and carries the wire protocol it needs from the core library.
$(BUILD)/libcoloc_report.so: $(CLIENT_OBJ) $(BUILD)/libcoloc_core.a client/coloc_report.map
	$(CXX) $(CXXFLAGS) $(LDFLAGS) -shared -Wl,--version-script=client/coloc_report.map -Wl,-z,defs \
	    -o $@ $(filter %.o %.a,$^) -lzmq -lmunge -lsodium -pthread

# The same for static linking, with the part of the wire protocol it uses; link it with
# -lzmq -lmunge -lsodium -lstdc++ -lm -pthread.
CLIENT_PROTO_OBJ := $(call obj,$(BUILD),proto/auth.cpp proto/client.cpp proto/envelope.cpp proto/fields.cpp)
$(BUILD)/libcoloc_report.a: $(CLIENT_OBJ) $(CLIENT_PROTO_OBJ)

# The tests run colocctl's offline commands too: all of ctl but main().
$(BUILD)/unit-tests: $(UNIT_OBJ) $(CLIENT_OBJ) $(filter-out %/colocctl_main.o,$(CTL_OBJ)) $(BUILD)/libcoloc_test_support.a $(LIBS)
	$(CXX) $(CXXFLAGS) $(LDFLAGS) -o $@ $^ $(LDLIBS_CORE) $(LDLIBS_SLURM)

# Concurrent place/started/ended clients that record what colocd acknowledged (crash test).
$(BUILD)/tests/coloc-load: $(BUILD)/obj/tests/load/coloc_load.o $(LIBS)
	@mkdir -p $(@D)
	$(CXX) $(CXXFLAGS) $(LDFLAGS) -o $@ $^ $(LDLIBS_CORE) $(LDLIBS_SLURM) -pthread

# Sends one request as the calling user: the authorisation tests act as users colocd must refuse.
$(BUILD)/tests/coloc-send: $(BUILD)/obj/tests/tools/coloc_send.o $(LIBS)
	@mkdir -p $(@D)
	$(CXX) $(CXXFLAGS) $(LDFLAGS) -o $@ $^ $(LDLIBS_CORE) $(LDLIBS_SLURM)

$(BUILD)/bench/%: $(BUILD)/obj/bench/%.o $(BUILD)/libcoloc_test_support.a $(LIBS)
	@mkdir -p $(@D)
	$(CXX) $(CXXFLAGS) $(LDFLAGS) -o $@ $^ $(LDLIBS_CORE) $(LDLIBS_SLURM)

$(BUILD)/obj/%.o: %.cpp
	@mkdir -p $(@D)
	$(CXX) $(CPPFLAGS) $(CXXFLAGS) -c -o $@ $<

# The unit tests' own code, and the test-only tools, are built for compile time: what they test
# is in the libraries, built with OPT. Full debug information at -O2 doubles a doctest file's
# compile time; line tables (-g1) are what a failure's backtrace needs. The benchmarks and
# tests/support (the reference code the benchmarks time) keep OPT.
TEST_OPT ?= -O1 -g1
$(BUILD)/obj/tests/unit/%.o $(BUILD)/obj/tests/load/%.o $(BUILD)/obj/tests/tools/%.o: OPT += $(TEST_OPT)

deps:
	@scripts/install-deps

# Unit tests need a munged; tests/unit-run starts a private one.
unit-test: $(BUILD)/unit-tests
	tests/unit-run $(BUILD)/unit-tests

# The Python client (client/coloc_report.py) against a colocd of its own, beside a private munged.
client-test: $(BUILD)/colocd $(BUILD)/libcoloc_report.so
	COLOC_BUILD_DIR=$(BUILD) tests/unit-run python3 -m unittest discover -s tests/client -v

# What the integration tests run beside the installed parts.
ITEST_BINS := all $(BUILD)/tests/coloc-load $(BUILD)/tests/coloc-send
integration-test: $(ITEST_BINS)
	COLOC_BUILD_DIR=$(BUILD) tests/integration/run

# make check runs the integration suite once, against the ASan + UBSan colocd and colocctl: every
# test then also checks memory and undefined behaviour, and a second run against the plain build
# (make integration-test) took another three and a half minutes of its thirty. The plain colocd
# serves client-test, and its code runs in the unit tests as it is built.
# make check builds with line tables only (-g1) where OPT is not given: GCC generates the same
# code whatever the -g level, and full debug information nearly doubles the compile time of the
# two builds that are most of make check's time. A plain `make` (what `make install` ships) keeps
# OPT's -g. Handed down in the environment, so that the sub-make's own additions to OPT (the
# tests' TEST_OPT) still apply.
CHECK_OPT := -O2 -g1
check_opt = $(if $(filter file,$(origin OPT)),OPT='$(CHECK_OPT)')
check: deps
	$(check_opt) $(MAKE) format-check
	$(check_opt) $(MAKE) check-build
	$(check_opt) $(MAKE) slurm-headers-check
	$(check_opt) $(MAKE) san-test
	$(check_opt) $(MAKE) unit-test
	$(check_opt) $(MAKE) client-test
	$(check_opt) $(MAKE) workload-test
	$(check_opt) $(MAKE) fuzz-check
	$(check_opt) $(MAKE) san-integration-test
	$(check_opt) $(MAKE) install-test

# Everything make check compiles, in one make: the builds' last compiles and links overlap the
# next build's first, where one make per build left a core idle at each end.
check-build: headers-check $(ITEST_BINS) san-build fuzz-build

demo: deps
	$(MAKE) $(BUILD)/colocd $(BUILD)/colocctl $(BUILD)/spank_coloc.so
	scripts/demo

bench: all
	@for b in bench/*; do \
	    case $$b in *.cpp|*.hpp|*.md) continue;; esac; \
	    [ -x $$b ] && { echo "== $$b"; BUILD=$(BUILD) $$b || exit 1; }; \
	done

# The Slurm-facing sources against each newer release's headers (../shared/slurm's tarballs).
slurm-headers-check:
	BUILD=$(BUILD) scripts/check-slurm-headers

format:
	clang-format -i $$(git ls-files '*.cpp' '*.hpp' '*.h')

# Fails, naming each file and line, where the code strays from .clang-format.
format-check:
	clang-format --dry-run -Werror $$(git ls-files '*.cpp' '*.hpp' '*.h')

clean:
	rm -rf $(BUILD)

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)

# install, uninstall, deb, install-test
include mk/install.mk
# fuzz, fuzz-check (libFuzzer targets in tests/fuzz/)
include mk/fuzz.mk
# the emulated training job and its link (tests/workload/), workload-test
include mk/workload.mk
# the ASan + UBSan and ThreadSanitizer variants: san-test, san-integration-test, tsan-test
include mk/sanitize.mk
# headers-check: every header compiles alone
include mk/headers.mk
