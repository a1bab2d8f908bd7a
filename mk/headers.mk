# make headers-check: every header compiles alone, each in a translation unit of its own
# (-fsyntax-only, one job per header), so that no header leans on what its includer happened to
# include first; a header its own .cpp opens with is compiled alone there. A stamp per header
# keeps a second run to the headers that changed.
# Included by the top-level Makefile; uses its BUILD and flags.

HEADERS := $(shell git ls-files '*.hpp' '*.h' 2>/dev/null || find . -path ./build -prune -o \( -name '*.hpp' -o -name '*.h' \) -print)
# A header whose own .cpp (same path, .cpp) opens with it, before any other line of the
# preprocessor, is already compiled alone there by every build: only the others are checked here.
hash := \#
HEADERS_OPENING_THEIR_CPP := $(shell for h in $(patsubst ./%,%,$(HEADERS)); do c=$${h%.*}.cpp; \
    [ -f "$$c" ] && [ "$$(grep -m1 '^[[:space:]]*$(hash)' "$$c")" = '$(hash)include "'"$$h"'"' ] && echo "$$h"; done)
HEADERS_ALONE := $(filter-out $(HEADERS_OPENING_THEIR_CPP),$(patsubst ./%,%,$(HEADERS)))
HEADER_STAMPS := $(patsubst %,$(BUILD)/headers/%.ok,$(HEADERS_ALONE))

# The include paths and macros of the build; not its dependency files, nor _FORTIFY_SOURCE (it
# needs -O, which a syntax check does not give).
HEADER_CPPFLAGS = $(filter-out -MMD -MP $(HARDEN_CPPFLAGS),$(CPPFLAGS))

.PHONY: headers-check
headers-check: $(HEADER_STAMPS)

$(BUILD)/headers/%.ok: %
	@mkdir -p $(@D)
	@echo "headers-check $<"
	@echo '#include "$<"' | $(CXX) $(HEADER_CPPFLAGS) $(CXXSTD) $(WARN) -fsyntax-only -MMD -MP -MT $@ -MF $@.d -x c++ - && touch $@
