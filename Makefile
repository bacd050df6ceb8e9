# bm2 — see README.md (and HACKING.md for developers). `make demo` and
# `make test` are all a newcomer needs.
PREFIX      ?= /usr
DESTDIR     ?=
BINDIR      ?= $(PREFIX)/bin
LIBEXECDIR  ?= $(PREFIX)/lib/bm2
UNITDIR     ?= $(PREFIX)/lib/systemd/system
GENDIR      ?= $(PREFIX)/lib/systemd/system-generators
USERUNITDIR ?= $(PREFIX)/lib/systemd/user
USERGENDIR  ?= $(PREFIX)/lib/systemd/user-generators
SYSUSERSDIR ?= $(PREFIX)/lib/sysusers.d
TMPFILESDIR ?= $(PREFIX)/lib/tmpfiles.d
CATALOGDIR  ?= $(PREFIX)/lib/systemd/catalog
BASHCOMPDIR ?= $(PREFIX)/share/bash-completion/completions
ZSHCOMPDIR  ?= $(PREFIX)/share/zsh/vendor-completions
FISHCOMPDIR ?= $(PREFIX)/share/fish/vendor_completions.d
MANDIR      ?= $(PREFIX)/share/man
SYSCONFDIR  ?= /etc

GO      ?= go
BINS    := bm2 bm2-generator bm2-probe
# The man pages (packaging/man/*.[1-8]): each goes to man<section>/, as the
# Debian package installs them (debian/bm2.manpages), uncompressed.
MANPAGES := $(wildcard packaging/man/*.[1-8])
STATIC_UNITS := bm2.slice bm2@.service bm2-probe@.service bm2-failed@.service bm2-notify.path bm2-notify.service \
                bm2-events.timer bm2-events.service bm2-metrics.socket bm2-metrics.service
# Connection steering is system scope's alone: no user unit.
STATIC_UNITS += bm2-steer@.service
# The units for users' own managers (user scope): units/user/.
USER_UNITS   := bm2.slice bm2@.service bm2-probe@.service bm2-failed@.service bm2-notify.path bm2-notify.service \
                bm2-events.timer bm2-events.service bm2-metrics.socket bm2-metrics.service

.PHONY: all build test test-deps test-unit test-e2e test-stress check fuzz bench demo install install-files uninstall clean

all: build

# bm2-probe runs as root from bm2's units (the probe, the exit and failure
# hooks): it is linked statically, without cgo, so that no dynamic loader
# (and no LD_PRELOAD, LD_AUDIT, LD_LIBRARY_PATH) is ever involved.
build:
	@mkdir -p bin
	$(GO) build -trimpath -o bin/ ./cmd/bm2 ./cmd/bm2-generator
	CGO_ENABLED=0 GO_EXTLINK_ENABLED=0 $(GO) build -trimpath -buildmode=exe -o bin/ ./cmd/bm2-probe

# Unit tests, golden files and systemd-analyze verify, then the end-to-end
# tests against a real systemd booted in namespaces (root; mandatory with
# CI=true). A test that cannot run here skips (with CI=true it fails); the
# last line says what was skipped and the command that makes it run.
test: build
	@log=$$(mktemp); rc=0; \
	  BM2_TEST_SKIPS=$$log $(GO) test -count=1 -timeout 45m ./... || rc=$$?; \
	  $(GO) -C bench test -count=1 ./... || rc=$$?; \
	  $(GO) run ./internal/testutil/skipsummary $$log; rm -f $$log; exit $$rc

# Everything make test needs beyond Go (as root): Debian packages,
# debhelper, the Bun and Node.js runtimes; .ci/run runs it too.
test-deps:
	./e2e/test-deps

test-unit:
	$(GO) test -count=1 $$($(GO) list ./... | grep -v /e2e)
	$(GO) -C bench test -count=1 ./...

test-e2e: build
	$(GO) test -count=1 -timeout 45m -v ./e2e/...

# The end-to-end suite with a CPU hog on every core (stress-ng), three
# times in a row (STRESS_RUNS=N to change); see e2e/stress.
test-stress: build
	./e2e/stress

# The bench is a module of its own (bench/go.mod): go vet and go test at
# the top skip it, so they run in bench/ too. Neither vendor/ is formatted.
check:
	@out=$$(gofmt -l $$(git ls-files '*.go' ':!vendor' ':!bench/vendor' 2>/dev/null || find . -name '*.go' -not -path './vendor/*' -not -path './bench/vendor/*')); \
	  if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(GO) -C bench vet ./...
	$(GO) test -race -count=1 ./...
	$(GO) -C bench test -race -count=1 ./...

fuzz:
	$(GO) test ./internal/config -run '^$$' -fuzz FuzzParse -fuzztime 60s
	$(GO) test ./generator -run '^$$' -fuzz FuzzGenerate -fuzztime 60s -parallel 1

bench: build
	./bench/run

demo: build
	./demo/run

install: build install-files

# What install-files reads from the tree besides bin/; the bench (its own
# module, bench/go.mod) copies exactly these and bin/'s bm2, bm2-generator
# and bm2-probe into its sandboxes (make install-sources prints them).
INSTALL_SOURCES := Makefile units packaging internal/cli/completion internal/preload/reuseport.cjs
.PHONY: install-sources
install-sources:
	@echo $(INSTALL_SOURCES)

# install-files installs what `make build` left in bin/ without rebuilding
# (the end-to-end beds run it in parallel from one tree).
install-files:
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(LIBEXECDIR) $(DESTDIR)$(GENDIR) $(DESTDIR)$(UNITDIR) \
	  $(DESTDIR)$(USERGENDIR) $(DESTDIR)$(USERUNITDIR) \
	  $(DESTDIR)$(SYSUSERSDIR) $(DESTDIR)$(TMPFILESDIR) $(DESTDIR)$(SYSCONFDIR)/bm2
	install -m 0755 bin/bm2 $(DESTDIR)$(BINDIR)/bm2
	@# 0711: an exec of bm2-probe by another user (the health check's child,
	@# as an app's user) cannot read the file, so the kernel makes that
	@# process non-dumpable: the app cannot trace it or write its memory.
	install -m 0711 bin/bm2-probe $(DESTDIR)$(LIBEXECDIR)/bm2-probe
	@# The reusePort preload (reuseport = "preload"): root's, beside bm2-probe,
	@# where the apps that load it cannot change it.
	install -m 0644 internal/preload/reuseport.cjs $(DESTDIR)$(LIBEXECDIR)/reuseport.cjs
	install -m 0755 bin/bm2-generator $(DESTDIR)$(GENDIR)/bm2-generator
	@# The same generator for users' managers: it finds the user's projects
	@# (SYSTEMD_SCOPE=user, not root).
	install -m 0755 bin/bm2-generator $(DESTDIR)$(USERGENDIR)/bm2-generator
	@# Static units name the helper as /usr/lib/bm2/bm2-probe: follow LIBEXECDIR.
	for u in $(STATIC_UNITS); do \
	  sed -e 's|/usr/lib/bm2/|$(LIBEXECDIR)/|g' -e 's|/usr/bin/bm2 |$(BINDIR)/bm2 |g' units/static/$$u > $(DESTDIR)$(UNITDIR)/$$u && chmod 0644 $(DESTDIR)$(UNITDIR)/$$u || exit 1; done
	@# bm2-notify.path and bm2-events.timer are enabled statically:
	@# paths.target and timers.target (pulled in by basic.target) want
	@# them at every boot.
	install -d $(DESTDIR)$(UNITDIR)/paths.target.wants $(DESTDIR)$(UNITDIR)/timers.target.wants
	ln -sfn ../bm2-notify.path $(DESTDIR)$(UNITDIR)/paths.target.wants/bm2-notify.path
	ln -sfn ../bm2-events.timer $(DESTDIR)$(UNITDIR)/timers.target.wants/bm2-events.timer
	for u in $(USER_UNITS); do \
	  sed -e 's|/usr/lib/bm2/|$(LIBEXECDIR)/|g' -e 's|/usr/bin/bm2 |$(BINDIR)/bm2 |g' units/user/$$u > $(DESTDIR)$(USERUNITDIR)/$$u && chmod 0644 $(DESTDIR)$(USERUNITDIR)/$$u || exit 1; done
	install -d $(DESTDIR)$(USERUNITDIR)/paths.target.wants $(DESTDIR)$(USERUNITDIR)/timers.target.wants
	ln -sfn ../bm2-notify.path $(DESTDIR)$(USERUNITDIR)/paths.target.wants/bm2-notify.path
	ln -sfn ../bm2-events.timer $(DESTDIR)$(USERUNITDIR)/timers.target.wants/bm2-events.timer
	@# An older bm2 answered each scrape in its own bm2-metrics@.service
	@# (Accept=yes): gone (bm2-metrics.service answers them all).
	rm -f $(DESTDIR)$(UNITDIR)/bm2-metrics@.service $(DESTDIR)$(USERUNITDIR)/bm2-metrics@.service
	@# An older bm2 started its relay from a path unit, bm2-events.path, on
	@# the restart's path: gone (the probes drain the spool now).
	@if [ -z "$(DESTDIR)" ] && [ -d /run/systemd/system ]; then systemctl stop bm2-events.path 2>/dev/null || true; fi
	rm -f $(DESTDIR)$(UNITDIR)/paths.target.wants/bm2-events.path $(DESTDIR)$(USERUNITDIR)/paths.target.wants/bm2-events.path \
	  $(DESTDIR)$(UNITDIR)/bm2-events.path $(DESTDIR)$(USERUNITDIR)/bm2-events.path
	install -m 0644 packaging/sysusers.d/bm2.conf $(DESTDIR)$(SYSUSERSDIR)/bm2.conf
	install -m 0644 packaging/tmpfiles.d/bm2.conf $(DESTDIR)$(TMPFILESDIR)/bm2.conf
	@# On a live host (no DESTDIR) with systemd running, create the account and
	@# directories and let systemd see the new generator and units.
	@if [ -z "$(DESTDIR)" ] && [ -d /run/systemd/system ]; then \
	  systemd-sysusers $(SYSUSERSDIR)/bm2.conf && \
	  systemd-tmpfiles --create $(TMPFILESDIR)/bm2.conf && \
	  systemctl daemon-reload && \
	  systemctl start bm2-notify.path bm2-events.timer; fi
	@# sysctl.d: net.ipv4.tcp_migrate_req=1, so that `bm2 reload` drops no
	@# connection (see the file); applied at once on a live host.
	install -d $(DESTDIR)$(PREFIX)/lib/sysctl.d
	install -m 0644 packaging/sysctl.d/50-bm2.conf $(DESTDIR)$(PREFIX)/lib/sysctl.d/50-bm2.conf
	@if [ -z "$(DESTDIR)" ] && [ -d /run/systemd/system ]; then \
	  /usr/lib/systemd/systemd-sysctl $(PREFIX)/lib/sysctl.d/50-bm2.conf || \
	  echo "warning: could not apply $(PREFIX)/lib/sysctl.d/50-bm2.conf; it applies at the next boot"; fi
	@# The journal catalog: what each of bm2's events means and what to do
	@# (journalctl -x -t bm2); rebuilt at once on a live host.
	install -d $(DESTDIR)$(CATALOGDIR)
	install -m 0644 packaging/catalog/bm2.catalog $(DESTDIR)$(CATALOGDIR)/bm2.catalog
	@if [ -z "$(DESTDIR)" ] && [ -d /run/systemd/system ]; then \
	  journalctl --update-catalog || \
	  echo "warning: journalctl --update-catalog failed; run it again to see bm2's catalog in journalctl -x"; fi
	@# Shell completion: the scripts `bm2 completion bash|zsh|fish` prints
	@# (embedded from internal/cli/completion/), where the shells look for them.
	install -d $(DESTDIR)$(BASHCOMPDIR) $(DESTDIR)$(ZSHCOMPDIR) $(DESTDIR)$(FISHCOMPDIR)
	install -m 0644 internal/cli/completion/bm2.bash $(DESTDIR)$(BASHCOMPDIR)/bm2
	install -m 0644 internal/cli/completion/_bm2 $(DESTDIR)$(ZSHCOMPDIR)/_bm2
	install -m 0644 internal/cli/completion/bm2.fish $(DESTDIR)$(FISHCOMPDIR)/bm2.fish
	@# The man pages: bm2(1), bm2-import(1), bm2.toml(5), bm2-generator(8), which
	@# bm2's errors and hints cite.
	for f in $(MANPAGES); do \
	  s=$${f##*.}; install -d $(DESTDIR)$(MANDIR)/man$$s && \
	  install -m 0644 $$f $(DESTDIR)$(MANDIR)/man$$s/$${f##*/} || exit 1; done

uninstall:
	@if [ -z "$(DESTDIR)" ] && [ -d /run/systemd/system ]; then \
	  systemctl stop bm2.slice bm2-notify.path bm2-notify.service bm2-events.timer bm2-events.service 2>/dev/null || true; fi
	rm -f $(DESTDIR)$(UNITDIR)/paths.target.wants/bm2-notify.path $(DESTDIR)$(UNITDIR)/timers.target.wants/bm2-events.timer
	rm -f $(DESTDIR)$(USERUNITDIR)/paths.target.wants/bm2-notify.path $(DESTDIR)$(USERUNITDIR)/timers.target.wants/bm2-events.timer
	@# (bm2-events.path: what an older bm2 installed.)
	rm -f $(DESTDIR)$(UNITDIR)/paths.target.wants/bm2-events.path $(DESTDIR)$(USERUNITDIR)/paths.target.wants/bm2-events.path \
	  $(DESTDIR)$(UNITDIR)/bm2-events.path $(DESTDIR)$(USERUNITDIR)/bm2-events.path
	-rmdir $(DESTDIR)$(USERUNITDIR)/paths.target.wants $(DESTDIR)$(USERUNITDIR)/timers.target.wants 2>/dev/null
	-rmdir $(DESTDIR)$(UNITDIR)/paths.target.wants $(DESTDIR)$(UNITDIR)/timers.target.wants 2>/dev/null
	rm -f $(DESTDIR)$(BINDIR)/bm2 $(DESTDIR)$(LIBEXECDIR)/bm2-probe $(DESTDIR)$(LIBEXECDIR)/reuseport.cjs $(DESTDIR)$(GENDIR)/bm2-generator \
	  $(DESTDIR)$(USERGENDIR)/bm2-generator \
	  $(addprefix $(DESTDIR)$(UNITDIR)/,$(STATIC_UNITS)) \
	  $(addprefix $(DESTDIR)$(USERUNITDIR)/,$(USER_UNITS)) \
	  $(DESTDIR)$(SYSUSERSDIR)/bm2.conf $(DESTDIR)$(TMPFILESDIR)/bm2.conf
	-rmdir $(DESTDIR)$(LIBEXECDIR) 2>/dev/null
	@if [ -z "$(DESTDIR)" ] && [ -d /run/systemd/system ]; then systemctl daemon-reload; fi
	@echo "kept $(SYSCONFDIR)/bm2 (your project files), /var/lib/bm2, /var/log/bm2 and every user's ~/.bm2"
	rm -f $(DESTDIR)$(PREFIX)/lib/sysctl.d/50-bm2.conf
	rm -f $(DESTDIR)$(CATALOGDIR)/bm2.catalog
	rm -f $(DESTDIR)$(BASHCOMPDIR)/bm2 $(DESTDIR)$(ZSHCOMPDIR)/_bm2 $(DESTDIR)$(FISHCOMPDIR)/bm2.fish
	for f in $(MANPAGES); do s=$${f##*.}; rm -f $(DESTDIR)$(MANDIR)/man$$s/$${f##*/}; done
	@if [ -z "$(DESTDIR)" ] && [ -d /run/systemd/system ]; then journalctl --update-catalog || true; fi

clean:
	rm -rf bin dist

# Debian packaging (debian/, packaging/man/): `make deb` builds
# dist/bm2_<version>_<arch>.deb from the working tree with dpkg-buildpackage,
# offline (debian/README.source); `make man` checks the man pages for
# groff warnings. debian/build-deps.sh installs what they need.
.PHONY: deb man

deb:
	bash debian/build-deb dist

man:
	@for f in packaging/man/*.[1-8]; do \
	  w=$$(LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings -E UTF-8 -l -Tutf8 -Z "$$f" 2>&1 >/dev/null); \
	  if [ -n "$$w" ]; then echo "$$f:"; echo "$$w"; exit 1; fi; \
	done; echo "man pages: no warnings"
