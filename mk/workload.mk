# The emulated training job and its shared link (tests/workload/), and their fast checks.
# Included by the top-level Makefile; uses its BUILD.
WORKLOAD_BINS := $(BUILD)/tests/coloc-workload $(BUILD)/tests/coloc-link
all: $(WORKLOAD_BINS)

$(BUILD)/tests/coloc-workload: $(BUILD)/obj/tests/workload/workload.o $(BUILD)/libcoloc_report.a
	@mkdir -p $(@D)
	$(CXX) $(CXXFLAGS) $(LDFLAGS) -o $@ $^ -lzmq -lmunge -lsodium -lm -pthread

$(BUILD)/tests/coloc-link: $(BUILD)/obj/tests/workload/link_relay.o
	@mkdir -p $(@D)
	$(CXX) $(CXXFLAGS) $(LDFLAGS) -o $@ $^

.PHONY: workload workload-test
workload: $(WORKLOAD_BINS)

# Time-slicing on one fake GPU and a job alone at its solo time (tests/workload/check, < 30 s).
workload-test: $(WORKLOAD_BINS)
	COLOC_BUILD_DIR=$(BUILD) tests/workload/check
