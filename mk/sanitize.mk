# Sanitized variants, each from the one template below, into $(BUILD)/<variant>/. Included by the
# top-level Makefile; uses its BUILD, sources and flags. Each variant builds only what its tests run:
#   san   ASan + UBSan: the unit tests of the code that takes input from outside, holds raw memory
#         or runs threads (san-test), and colocd and colocctl for the integration suite
#         (san-integration-test, which fails on any report)
#   tsan  ThreadSanitizer: colocd's threaded unit tests (server, service, store, worker pool) and
#         the crash and storm integration tests against a ThreadSanitizer colocd (tsan-test)
# The pure computations (model, engine, replay simulator) are left to the plain unit tests; they
# run sanitized inside colocd in the integration suite.

# -g1: the line tables the reports need, without the full debug information's compile time.
SAN_OPT := -O1 -g1 -fno-omit-frame-pointer
SAN_QUICK_OPT := -O0
# UBSan without its vptr, alignment and null checks: with them GCC takes twice as long over the
# instrumented build (the largest part of make check). ASan reports a null dereference itself
# (SEGV on unknown address), and the fuzz targets (mk/fuzz.mk: clang, every UBSan check) keep
# the alignment and vptr checks on the code that reads bytes from outside.
SAN_FLAGS_san := -fsanitize=address,undefined -fno-sanitize=vptr,alignment,null -fno-sanitize-recover=undefined
SAN_FLAGS_tsan := -fsanitize=thread

# The sanitizers check what _FORTIFY_SOURCE would, through their own interceptors.
SAN_CPPFLAGS = $(filter-out $(HARDEN_CPPFLAGS),$(CPPFLAGS))

# The unit tests each variant runs.
SAN_UNIT_NAMES_san := backlog_journal bind_slots_from_slurm client_report config db_trouble example_config \
    gres_detail group_commit hardware_config hostlist metrics multinode multinode_narrow \
    proto_envelope proto_jobs protocol_upgrade reconcile replay_readers server server_hostile \
    service service_routes site_layout slurm_release spank_% steering store unknown_profile \
    elastic_slots worker_pool ctl_probe background_query_watch
SAN_UNIT_NAMES_tsan := server server_hostile service service_routes store worker_pool group_commit \
    db_trouble backlog_journal background_query_watch
# The libraries their link needs, in the linker's order: only these are built.
SAN_UNIT_LIBS_san := $(addprefix $(BUILD)/san/,libctl.a libclient.a libspank_logic.a libcolocd.a libcoloc_core.a)
SAN_UNIT_LIBS_tsan := $(addprefix $(BUILD)/tsan/,libcolocd.a libcoloc_core.a)
# The integration tests tsan-test runs (tests/integration/run patterns).
TSAN_ITESTS := 30-crash-safety 31-storm

# Where each variant's unit tests' own objects come from. ASan and UBSan check the code they
# instrument whoever calls it: the ASan + UBSan unit tests link the plain build's test objects
# (compiled once for both runs) with instrumented libraries, which come first in the link so that
# an inline function both use out of line is the libraries' instrumented copy. ThreadSanitizer
# must see every access and atomic, the tests' own among them: its tests are built instrumented.
SAN_TEST_DIR_san := $(BUILD)
SAN_TEST_DIR_tsan := $(BUILD)/tsan
san_unit_tests = $(call obj,$(SAN_TEST_DIR_$(1)),tests/unit/main.cpp \
    $(filter $(patsubst %,tests/unit/%_test.cpp,$(SAN_UNIT_NAMES_$(1))),$(UNIT_SRC)))

# $(1): the variant. Defines $(BUILD)/$(1)/{colocd,colocctl,unit-tests} and their libraries.
define sanitized_variant
$(1)_DIR := $$(BUILD)/$(1)

$$($(1)_DIR)/obj/%.o: %.cpp
	@mkdir -p $$(@D)
	$$(CXX) $$(SAN_CPPFLAGS) $$(CXXFLAGS) $$(SAN_OPT) $$(SAN_FLAGS_$(1)) -c -o $$@ $$<
# The tests' own code (ThreadSanitizer's), colocctl's commands and the replay (colocctl's alone)
# at -O0 (SAN_QUICK_OPT): instrumented, they compile in about two thirds of the time, and no
# test waits on their speed. colocd's code, whose pace the integration suite's deadlines see,
# keeps SAN_OPT.
$$($(1)_DIR)/obj/tests/unit/%.o $$($(1)_DIR)/obj/ctl/%.o $$($(1)_DIR)/obj/replay/%.o: SAN_OPT += $$(SAN_QUICK_OPT)

$$($(1)_DIR)/libcoloc_core.a: $$(call obj,$$($(1)_DIR),$$(CORE_SRC)) $$(EMBED_OBJ)
$$($(1)_DIR)/libcolocd.a: $$(call obj,$$($(1)_DIR),$$(DAEMON_SRC))
$$($(1)_DIR)/libspank_logic.a: $$(call obj,$$($(1)_DIR),$$(SPANK_LOGIC_SRC))
$$($(1)_DIR)/libcoloc_test_support.a: $$(call obj,$$($(1)_DIR),$$(TEST_SUPPORT_SRC))
$$($(1)_DIR)/libctl.a: $$(call obj,$$($(1)_DIR),$$(filter-out %/colocctl_main.cpp,$$(CTL_SRC)))
$$($(1)_DIR)/libclient.a: $$(call obj,$$($(1)_DIR),$$(CLIENT_SRC))

$$($(1)_DIR)/colocd: $$($(1)_DIR)/obj/daemon/colocd_main.o $$($(1)_DIR)/libcolocd.a $$($(1)_DIR)/libcoloc_core.a
	$$(CXX) $$(CXXFLAGS) $$(LDFLAGS) $$(SAN_FLAGS_$(1)) -o $$@ $$^ $$(LDLIBS_CORE) $$(LDLIBS_SLURM)

$$($(1)_DIR)/colocctl: $$($(1)_DIR)/obj/ctl/colocctl_main.o $$($(1)_DIR)/libctl.a $$($(1)_DIR)/libcolocd.a $$($(1)_DIR)/libcoloc_core.a
	$$(CXX) $$(CXXFLAGS) $$(LDFLAGS) $$(SAN_FLAGS_$(1)) -o $$@ $$^ $$(LDLIBS_CORE) $$(LDLIBS_SLURM)

# The storage tests' fault-injecting SQLite VFS is the one piece of tests/support they link.
$$($(1)_DIR)/unit-tests: $$(call san_unit_tests,$(1)) $$($(1)_DIR)/obj/tests/support/fault_vfs.o $$(SAN_UNIT_LIBS_$(1))
	$$(CXX) $$(CXXFLAGS) $$(LDFLAGS) $$(SAN_FLAGS_$(1)) -o $$@ \
	    -Wl,--whole-archive $$(SAN_UNIT_LIBS_$(1)) -Wl,--no-whole-archive $$(filter %.o,$$^) \
	    $$(LDLIBS_CORE) $$(LDLIBS_SLURM)
endef

$(eval $(call sanitized_variant,san))
$(eval $(call sanitized_variant,tsan))
# Kept for scripts and habits that name it.
SAN_BUILD := $(san_DIR)

.PHONY: san-build san-test san-integration-test tsan-test

# What san-test and san-integration-test run.
san-build: $(san_DIR)/unit-tests $(san_DIR)/colocd $(san_DIR)/colocctl

san-test: $(san_DIR)/unit-tests
	ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 tests/unit-run $(san_DIR)/unit-tests

# The integration suite against colocd and colocctl built with ASan + UBSan; a report fails it.
san-integration-test: $(ITEST_BINS) $(san_DIR)/colocd $(san_DIR)/colocctl
	COLOC_BUILD_DIR=$(BUILD) COLOC_SANITIZED_DIR=$(san_DIR) tests/integration/run

# Any ThreadSanitizer report fails the unit tests (exitcode) and the integration tests (the
# runner counts the reports colocd and colocctl wrote).
tsan-test: $(ITEST_BINS) $(tsan_DIR)/unit-tests $(tsan_DIR)/colocd $(tsan_DIR)/colocctl
	TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 tests/unit-run $(tsan_DIR)/unit-tests
	COLOC_BUILD_DIR=$(BUILD) COLOC_SANITIZED_DIR=$(tsan_DIR) tests/integration/run $(TSAN_ITESTS)
