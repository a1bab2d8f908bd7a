# make install / uninstall / deb / install-test. Included by the top-level Makefile after its
# `all` rule; uses its BUILD and PREFIX. Directories follow the GNU names and can be overridden:
#   make install DESTDIR=/tmp/stage PREFIX=/usr libdir=/usr/lib/x86_64-linux-gnu
# The plugstack snippet names the plugin by its full path, so Slurm finds it in any directory.

_coloc_default_goal := $(.DEFAULT_GOAL)

bindir          ?= $(PREFIX)/bin
sbindir         ?= $(PREFIX)/sbin
libdir          ?= $(PREFIX)/lib
includedir      ?= $(PREFIX)/include
pythondir       ?= $(PREFIX)/lib/python3/dist-packages
mandir          ?= $(PREFIX)/share/man
docdir          ?= $(PREFIX)/share/doc/coloc
sysconfdir      ?= /etc
slurm_plugindir ?= $(libdir)/slurm
slurm_confdir   ?= $(sysconfdir)/slurm
unitdir         ?= $(PREFIX)/lib/systemd/system
INSTALL         ?= install

MAN_PAGES := $(wildcard man/*.[1-8])
INSTALL_BINS := $(BUILD)/colocd $(BUILD)/colocctl $(BUILD)/spank_coloc.so $(BUILD)/spank_coloc_net.so \
    $(BUILD)/libcoloc_report.so \
    $(BUILD)/libcoloc_report.a

# Paths inside the shipped files follow the directories chosen here.
_unit_sed := -e 's|/usr/sbin/colocd|$(sbindir)/colocd|' -e 's|/etc/coloc/|$(sysconfdir)/coloc/|'
_plugstack_sed := -e 's|^optional spank_coloc\.so|optional $(slurm_plugindir)/spank_coloc.so|'

.PHONY: install uninstall deb install-test

install: $(INSTALL_BINS)
	$(INSTALL) -d $(DESTDIR)$(bindir) $(DESTDIR)$(sbindir) $(DESTDIR)$(slurm_plugindir) \
	    $(DESTDIR)$(unitdir) $(DESTDIR)$(sysconfdir)/coloc $(DESTDIR)$(slurm_confdir)/plugstack.conf.d \
	    $(DESTDIR)$(docdir) $(DESTDIR)$(libdir) $(DESTDIR)$(includedir) $(DESTDIR)$(pythondir)
	$(INSTALL) -m 0755 $(BUILD)/colocd $(DESTDIR)$(sbindir)/colocd
	$(INSTALL) -m 0755 $(BUILD)/colocctl $(DESTDIR)$(bindir)/colocctl
	$(INSTALL) -m 0755 $(BUILD)/spank_coloc.so $(DESTDIR)$(slurm_plugindir)/spank_coloc.so
	@# Loaded by spank_coloc.so from beside itself when a step asks colocd.
	$(INSTALL) -m 0755 $(BUILD)/spank_coloc_net.so $(DESTDIR)$(slurm_plugindir)/spank_coloc_net.so
	@# What a training job reports its iteration times with (coloc_report(3)).
	$(INSTALL) -m 0644 $(BUILD)/libcoloc_report.so $(DESTDIR)$(libdir)/libcoloc_report.so
	$(INSTALL) -m 0644 $(BUILD)/libcoloc_report.a $(DESTDIR)$(libdir)/libcoloc_report.a
	$(INSTALL) -m 0644 client/coloc_report.h $(DESTDIR)$(includedir)/coloc_report.h
	$(INSTALL) -m 0644 client/coloc_report.py $(DESTDIR)$(pythondir)/coloc_report.py
	@for page in $(MAN_PAGES); do \
	    dir=$(DESTDIR)$(mandir)/man$${page##*.}; \
	    echo "$(INSTALL) -m 0644 $$page $$dir/"; \
	    $(INSTALL) -d $$dir && $(INSTALL) -m 0644 $$page $$dir/ || exit 1; \
	done
	@# The catalogue holds Gavel's measurements (MIT): their notice goes with it.
	$(INSTALL) -m 0644 data/gavel/LICENSE $(DESTDIR)$(docdir)/GAVEL-LICENSE
	@# Bind mode without changing job scripts: an admin copies it beside slurm.conf (spank_coloc(8)).
	$(INSTALL) -m 0644 etc/job_submit.lua $(DESTDIR)$(docdir)/job_submit.lua
	sed $(_unit_sed) etc/colocd.service > $(DESTDIR)$(unitdir)/colocd.service
	chmod 0644 $(DESTDIR)$(unitdir)/colocd.service
	@# An admin's configuration is never overwritten.
	@install_conf() { \
	    if [ -e "$$2" ]; then echo "install: kept $$2 (exists)"; \
	    else echo "install $$1 -> $$2"; cat > "$$2" && chmod 0644 "$$2"; fi; \
	}; \
	install_conf etc/colocd.yaml $(DESTDIR)$(sysconfdir)/coloc/colocd.yaml < etc/colocd.yaml && \
	install_conf etc/profiles.yaml $(DESTDIR)$(sysconfdir)/coloc/profiles.yaml < etc/profiles.yaml && \
	sed $(_plugstack_sed) etc/plugstack.conf.d/coloc.conf | \
	    install_conf etc/plugstack.conf.d/coloc.conf $(DESTDIR)$(slurm_confdir)/plugstack.conf.d/coloc.conf

uninstall:
	rm -f $(DESTDIR)$(sbindir)/colocd $(DESTDIR)$(bindir)/colocctl \
	    $(DESTDIR)$(slurm_plugindir)/spank_coloc.so $(DESTDIR)$(slurm_plugindir)/spank_coloc_net.so \
	    $(DESTDIR)$(unitdir)/colocd.service \
	    $(DESTDIR)$(docdir)/GAVEL-LICENSE $(DESTDIR)$(docdir)/job_submit.lua $(DESTDIR)$(libdir)/libcoloc_report.so \
	    $(DESTDIR)$(libdir)/libcoloc_report.a \
	    $(DESTDIR)$(includedir)/coloc_report.h $(DESTDIR)$(pythondir)/coloc_report.py \
	    $(foreach p,$(MAN_PAGES),$(DESTDIR)$(mandir)/man$(subst .,,$(suffix $(p)))/$(notdir $(p)))
	@# Configuration files go only when unchanged.
	@remove_conf() { \
	    if [ ! -e "$$1" ]; then :; \
	    elif cmp -s - "$$1"; then echo "rm -f $$1"; rm -f "$$1"; \
	    else echo "uninstall: kept $$1 (changed)"; fi; \
	}; \
	remove_conf $(DESTDIR)$(sysconfdir)/coloc/colocd.yaml < etc/colocd.yaml; \
	remove_conf $(DESTDIR)$(sysconfdir)/coloc/profiles.yaml < etc/profiles.yaml; \
	sed $(_plugstack_sed) etc/plugstack.conf.d/coloc.conf | \
	    remove_conf $(DESTDIR)$(slurm_confdir)/plugstack.conf.d/coloc.conf; \
	rmdir $(DESTDIR)$(sysconfdir)/coloc $(DESTDIR)$(docdir) 2>/dev/null || true

# build/coloc_<version>-1+slurm<MMmm>_<arch>.deb (SLURM=DIR: for the Slurm under DIR, mk/slurm.mk)
deb: $(INSTALL_BINS)
	+BUILD=$(BUILD) SLURM=$(SLURM) SLURM_PLUGINDIR=$(if $(SLURM),$(slurm_plugindir)) scripts/make-deb

install-test: $(INSTALL_BINS)
	+BUILD=$(BUILD) SLURM=$(SLURM) tests/install/run

.DEFAULT_GOAL := $(_coloc_default_goal)
