# Building and testing against another Slurm release than the system's. Included by the top-level
# Makefile right after BUILD is set, before anything uses it:
#   make ... SLURM=DIR                 build against the Slurm installed under DIR (its headers and
#                                      libslurm) into build/slurm-<major.minor>/; build/ stays as it is
#   make check-slurm SLURM=DIR         unit + integration tests with DIR's daemons (slurmctld, slurmd,
#                                      sbatch ... from DIR/sbin and DIR/bin)
#   make deb SLURM=DIR                 coloc_<version>-1+slurm<MMmm>_<arch>.deb for that release
# scripts/slurm-build VERSION installs a release from ../shared/slurm and prints its DIR.

_coloc_slurm_goal := $(.DEFAULT_GOAL)

ifneq ($(SLURM),)
SLURM := $(patsubst %/,%,$(SLURM))
SLURM_VERSION_H := $(SLURM)/include/slurm/slurm_version.h
ifeq ($(wildcard $(SLURM_VERSION_H)),)
$(error SLURM=$(SLURM): no $(SLURM_VERSION_H); give the prefix Slurm is installed under (scripts/slurm-build prints it))
endif
# "24.11", from SLURM_VERSION_NUMBER (0xMMmmuu) as Slurm's configure wrote it.
SLURM_RELEASE := $(shell v=$$(awk '/define SLURM_VERSION_NUMBER/ {print $$3}' $(SLURM_VERSION_H)) && \
    printf '%d.%02d' $$((v >> 16)) $$(((v >> 8) & 255)))
ifeq ($(SLURM_RELEASE),)
$(error $(SLURM_VERSION_H): no SLURM_VERSION_NUMBER)
endif
# Where libslurm is: lib64 (RPM), lib/<multiarch> (Debian packages), lib (./configure --prefix).
SLURM_LIBDIR ?= $(patsubst %/,%,$(dir $(firstword $(wildcard $(SLURM)/lib64/libslurm.so \
    $(SLURM)/lib/$(shell gcc -print-multiarch 2>/dev/null)/libslurm.so $(SLURM)/lib/libslurm.so))))
ifeq ($(SLURM_LIBDIR),)
$(error SLURM=$(SLURM): no libslurm.so under $(SLURM)/lib64, $(SLURM)/lib/<multiarch> or $(SLURM)/lib)
endif
BUILD := $(BUILD)/slurm-$(SLURM_RELEASE)
CPPFLAGS += -I$(SLURM)/include
# Outside ld.so's own directories, the binaries carry where their libslurm is.
SLURM_RPATH := $(if $(filter /lib /lib/% /lib64 /usr/lib /usr/lib/% /usr/lib64,$(SLURM_LIBDIR)),,-Wl,-rpath,$(SLURM_LIBDIR))
LDLIBS_SLURM := -L$(SLURM_LIBDIR) $(SLURM_RPATH) -lslurm
# The plugin goes where that Slurm looks for plugins (its configure's default, PluginDir).
slurm_plugindir ?= $(SLURM_LIBDIR)/slurm
endif

.PHONY: check-slurm
# Unit and integration tests against DIR's Slurm: its libslurm is linked, its daemons run the
# test cluster (found through PATH).
check-slurm:
	@[ -n "$(SLURM)" ] || { echo "make check-slurm: give SLURM=DIR (scripts/slurm-build 24.11 prints one)" >&2; exit 2; }
	$(MAKE) all $(BUILD)/tests/coloc-load $(BUILD)/tests/coloc-send
	tests/unit-run $(BUILD)/unit-tests
	PATH=$(SLURM)/sbin:$(SLURM)/bin:$$PATH COLOC_BUILD_DIR=$(BUILD) tests/integration/run

.DEFAULT_GOAL := $(_coloc_slurm_goal)
