# make headers-check: every header compiles alone, each in a translation unit of its own
# (-fsyntax-only, one job per header), so that no header leans on what its includer happened to
# include first. A stamp per header keeps a second run to the headers that changed.
# Included by the top-level Makefile; uses its BUILD and flags.

HEADERS := $(shell git ls-files '*.hpp' '*.h' 2>/dev/null || find . -path ./build -prune -o \( -name '*.hpp' -o -name '*.h' \) -print)
HEADER_STAMPS := $(patsubst %,$(BUILD)/headers/%.ok,$(patsubst ./%,%,$(HEADERS)))

# The include paths and macros of the build; not its dependency files, nor _FORTIFY_SOURCE (it
# needs -O, which a syntax check does not give).
HEADER_CPPFLAGS = $(filter-out -MMD -MP $(HARDEN_CPPFLAGS),$(CPPFLAGS))

.PHONY: headers-check
headers-check: $(HEADER_STAMPS)

$(BUILD)/headers/%.ok: %
	@mkdir -p $(@D)
	@echo "headers-check $<"
	@echo '#include "$<"' | $(CXX) $(HEADER_CPPFLAGS) $(CXXSTD) $(WARN) -fsyntax-only -MMD -MP -MT $@ -MF $@.d -x c++ - && touch $@
