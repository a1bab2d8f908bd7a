# libFuzzer targets for hostile input (tests/fuzz/, one .cpp per target), built with clang and
# ASan + UBSan into their own directory. Included by the top-level Makefile.
#   make fuzz                     each target for FUZZ_SECONDS (default 60), seeds from
#                                 tests/fuzz/corpus/<target>/; new inputs go to FUZZ_BUILD/corpus
#   make fuzz-check               each target for FUZZ_CI_RUNS inputs (default 20000) from a fixed
#                                 seed and the seed corpus alone, at most FUZZ_CI_SECONDS each:
#                                 the same inputs on every machine; part of make check
#   make fuzz-bar                 each target for FUZZ_BAR_RUNS inputs (default 1,000,000), at
#                                 most FUZZ_BAR_SECONDS each (default 3600), one target per job
#                                 (make -jN fuzz-bar); fails a target the cap stopped short
# A crash, leak, UB report or unexpected exception stops the run and leaves the input in
# FUZZ_BUILD/crashes/; add it to the seed corpus once fixed.

FUZZ_CXX        ?= clang++
FUZZ_BUILD      ?= $(BUILD)/fuzz
FUZZ_SECONDS    ?= 60
FUZZ_CI_SECONDS ?= 60
FUZZ_CI_RUNS    ?= 20000
FUZZ_BAR_RUNS    ?= 1000000
FUZZ_BAR_SECONDS ?= 3600
FUZZ_FLAGS      := $(CXXSTD) -Wall -Wextra -O1 -gline-tables-only -fno-omit-frame-pointer \
                   -fsanitize=address,undefined -fno-sanitize-recover=all
FUZZ_LDLIBS     := -lyaml-cpp -lmunge -lsodium -lslurm

# Only what the targets reach: the wire protocol, the plugin's child-pipe message, the config
# loader, the trace readers.
FUZZ_LIB_SRC := $(wildcard proto/*.cpp) spank/exchange_message.cpp config/config.cpp config/hardware.cpp slurm/hostlist.cpp \
                place/topology.cpp $(wildcard replay/read_*.cpp) replay/text.cpp replay/trace.cpp model/io/gavel_json.cpp \
                base/files.cpp
FUZZ_LIB_OBJ := $(patsubst %.cpp,$(FUZZ_BUILD)/obj/%.o,$(FUZZ_LIB_SRC))
FUZZ_TARGETS := $(patsubst tests/fuzz/%.cpp,%,$(wildcard tests/fuzz/*.cpp))
FUZZ_BINS    := $(addprefix $(FUZZ_BUILD)/fuzz-,$(FUZZ_TARGETS))

.PHONY: fuzz fuzz-build fuzz-check fuzz-bar

$(FUZZ_BUILD)/obj/%.o: %.cpp
	@mkdir -p $(@D)
	$(FUZZ_CXX) $(CPPFLAGS) $(FUZZ_FLAGS) -fsanitize=fuzzer-no-link -c -o $@ $<

$(FUZZ_BUILD)/libcoloc-fuzz.a: $(FUZZ_LIB_OBJ)
	$(AR) rcs $@ $^

$(FUZZ_BUILD)/fuzz-%: $(FUZZ_BUILD)/obj/tests/fuzz/%.o $(FUZZ_BUILD)/libcoloc-fuzz.a
	$(FUZZ_CXX) $(FUZZ_FLAGS) -fsanitize=fuzzer -o $@ $^ $(FUZZ_LDLIBS)

fuzz-build: $(FUZZ_BINS)

fuzz: fuzz-build
	@FUZZ_BUILD=$(FUZZ_BUILD) tests/fuzz/run $(FUZZ_SECONDS) $(FUZZ_TARGETS)

# One target per job: the runs are fixed (seed and inputs), so running them side by side changes
# nothing but the time.
fuzz-check: $(addprefix fuzz-check-,$(FUZZ_TARGETS))
	@echo "fuzz-check: $(words $(FUZZ_TARGETS)) targets, $(FUZZ_CI_RUNS) inputs each, no finding"

fuzz-check-%: $(FUZZ_BUILD)/fuzz-%
	@rm -rf $(FUZZ_BUILD)/check-corpus/$*
	@FUZZ_BUILD=$(FUZZ_BUILD) FUZZ_WORK=$(FUZZ_BUILD)/check-corpus FUZZ_SEED=1 FUZZ_RUNS=$(FUZZ_CI_RUNS) \
	    tests/fuzz/run $(FUZZ_CI_SECONDS) $*

fuzz-bar: $(addprefix fuzz-bar-,$(FUZZ_TARGETS))

fuzz-bar-%: $(FUZZ_BUILD)/fuzz-%
	@FUZZ_BUILD=$(FUZZ_BUILD) FUZZ_WORK=$(FUZZ_BUILD)/bar-corpus FUZZ_SEED=1 FUZZ_RUNS=$(FUZZ_BAR_RUNS) \
	    FUZZ_REQUIRE_RUNS=1 tests/fuzz/run $(FUZZ_BAR_SECONDS) $*

-include $(shell find $(FUZZ_BUILD) -name '*.d' 2>/dev/null)
