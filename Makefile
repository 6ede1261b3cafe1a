# Bluejay for Linux. `make demo` and `make test` install what they need on a Debian
# machine (apt packages, a pinned Python venv for the Bumble test peer under .venv/).

SWIFT        ?= swift
PYTHON       ?= python3
VENV         := .venv
PEER_PY      := $(VENV)/bin/python
PEER         := Fixtures/peer/peer.py
BLUEJAY      := .build/debug/bluejay
APT_PACKAGES := libbluetooth-dev tshark bluez python3-venv libssl-dev openssl mosquitto mosquitto-clients
SUDO         := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
# btsnoop of the demo session, for tshark or `bluejay trace`.
DEMO_CAPTURE ?= demo.btsnoop

# What `make vmtest` needs beyond deps: QEMU (with qboot), busybox for the initramfs, kmod
# for depmod/modprobe, btvirt, bluetoothd/btmgmt/hciconfig, dbus for bluetoothd, setcap.
VM_APT_PACKAGES := qemu-system-x86 busybox-static kmod bluez bluez-test-tools dbus libcap2-bin
# Where `make vmtest` leaves btsnoop captures and logs from the guest.
VM_ARTIFACTS := $(CURDIR)/artifacts/vm

.PHONY: all build test format lint sanitized-build ci-deps test-corpus test-sanitize test-tsan-lane test-stress vmtest vmbench demo gateway-demo deps vm-deps venv bench bench-check bench-thresholds footprint static symbol-order traces fuzz examples consumer docs swift60 arm64 clean

all: build

# System packages: the BlueZ headers for the C shim, tshark/btmon to check captures,
# libssl-dev and openssl (the gateway's TLS, its tests' certificates), the mosquitto broker its tests and
# `make gateway-demo` start and mosquitto_sub (the demo's subscriber), python3-venv for the
# test peer. Installed only when missing.
deps:
	@missing=""; for p in $(APT_PACKAGES); do dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q 'install ok installed' || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "Installing:$$missing"; \
	  $(SUDO) apt-get update -q && \
	  $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $$missing; \
	fi

vm-deps:
	@$(MAKE) --no-print-directory deps APT_PACKAGES="$(VM_APT_PACKAGES)"

# Every apt package a CI run may need, in one apt run (.ci/run, before its two lanes: two
# apt runs at once would fight over dpkg's lock): deps, vm-deps, and mmdebstrap for
# make swift60's Debian 13 root.
ci-deps:
	@$(MAKE) --no-print-directory deps APT_PACKAGES="$(APT_PACKAGES) $(VM_APT_PACKAGES) mmdebstrap"

# The Bumble peer's pinned environment; rebuilt when the pins change.
venv: $(VENV)/.installed
# Under a lock: two makes at once (make test beside make consumer) would run two pip
# installs into one venv, and pip asserts when the other removed a file it wrote.
$(VENV)/.installed: Fixtures/peer/requirements.txt | deps
	@flock $(VENV).lock sh -c '[ -x $(PEER_PY) ] || $(PYTHON) -m venv $(VENV) || /usr/bin/python3 -m venv $(VENV)'
	flock $(VENV).lock $(PEER_PY) -m pip install -q --disable-pip-version-check -r Fixtures/peer/requirements.txt
	@touch $@

build: deps
	$(SWIFT) build --build-tests

# Every test: the peer's own self-test (the rig the integration tests stand on), then
# unit, trace conformance, and integration tests against the Bumble peer. Needs nothing
# beside the clone: the real traces it runs are the ones the repository ships
# (Fixtures/real-traces); the whole shared corpus is `make test-corpus`.
#
# SANITIZE=thread (or address) runs it on a sanitizer's build instead, in a scratch folder
# of its own (.build/tsan, .build/asan), the ordinary build untouched; the command-line
# suites then drive that build's instrumented tools (Tests/TestTraits/BuiltProducts.swift).
# Any report fails the run. TSan cannot see Swift's Mutex on Linux: see
# Tests/tsan-suppressions.txt. Under ThreadSanitizer it leaves out (TSAN_SKIP), because TSan
# has nothing to watch there:
# - CompileFailTests, SeedSnippetTests and DocumentationSnippetTests, which run the
#   compiler on programs written against the API (against the ordinary build's modules);
# - single-threaded pure code: BluetoothCryptoTests, TraceDecodingTests, FuzzTargetTests
#   (AddressSanitizer covers the decoders under `make fuzz`).
# SANITIZE_SKIP replaces that list (swift test --skip patterns, space-separated).
SANITIZE      ?=
TSAN_SKIP     := BluejayTests.CompileFailTests BluejayTests.SeedSnippetTests BluejayTests.DocumentationSnippetTests \
	BluetoothCryptoTests TraceDecodingTests FuzzTargetTests
SANITIZE_SKIP ?= $(if $(filter thread,$(SANITIZE)),$(TSAN_SKIP))
SANITIZED      = $(if $(SANITIZE),--sanitize=$(SANITIZE) --scratch-path .build/$(SANITIZE_DIR_$(SANITIZE)))
SANITIZE_DIR_thread  := tsan
SANITIZE_DIR_address := asan
SANITIZE_ENV_thread  := TSAN_OPTIONS="suppressions=$(CURDIR)/Tests/tsan-suppressions.txt halt_on_error=1"
SANITIZE_ENV_address := ASAN_OPTIONS="detect_leaks=0"
# TEST_PART splits one run of the suite in two, for CI's shards (a ThreadSanitizer run of
# all of it does not fit one): command-line runs the suites that drive the tools as
# processes (IntegrationTests.CommandLineTests), rest runs everything else; the two together
# are the whole suite. Empty: all of it.
TEST_PART ?=
TEST_PART_command-line := --filter 'IntegrationTests\.CommandLineTests'
TEST_PART_rest         := --skip 'IntegrationTests\.CommandLineTests'
test: deps venv $(if $(SANITIZE),sanitized-build,build)
	@case "$(TEST_PART)" in ""|command-line|rest) ;; *) echo "TEST_PART is command-line, rest or empty, not '$(TEST_PART)'"; exit 2;; esac
	$(PEER_PY) Fixtures/peer/selftest.py
	$(SANITIZE_ENV_$(SANITIZE)) $(SWIFT) test --skip-build $(SANITIZED) --skip CorpusTests $(foreach s,$(SANITIZE_SKIP),--skip $(s)) \
	    $(TEST_PART_$(TEST_PART))

sanitized-build: deps
	@case "$(SANITIZE)" in thread|address) ;; *) echo "SANITIZE is thread or address, not '$(SANITIZE)'"; exit 2;; esac
	$(SWIFT) build --build-tests $(SANITIZED)

# The shared corpus of real traces, ../shared/traces beside the clone (Tests/CorpusTests):
# it says which traces it found, and fails when the corpus is not there.
test-corpus: deps build
	$(SWIFT) test --skip-build --filter CorpusTests

# The example apps (Examples/: packages that depend on this one by path, as an app does),
# built as an app builds them (one scratch folder for both) and run against the peer.
EXAMPLES     := HeartRateMonitor HeartRateAsync
EXAMPLES_DIR := .build/examples
examples: deps venv
	for e in $(EXAMPLES); do $(SWIFT) build --package-path Examples/$$e --scratch-path $(EXAMPLES_DIR) || exit 1; done
	Examples/run.sh $(PEER_PY) $(EXAMPLES_DIR)/debug $(EXAMPLES)

# The example apps again, each depending on the package by version (a tagged clone,
# `from: "1.0.0"`) instead of by path, built and run against the peer: SwiftPM refuses
# unsafe flags in such a dependency (Fixtures/consumer/check.sh). CI runs this one.
consumer: deps venv
	Fixtures/consumer/check.sh $(SWIFT) $(PEER_PY) $(EXAMPLES)

# The documentation of every layer in one archive (DocC, through swift-docc-plugin): the
# Bluejay catalog (Sources/Bluejay/Bluejay.docc) and every public symbol, links across
# modules checked. Any DocC warning fails the target. Open the archive with `docc preview`,
# or give DOCS_OUTPUT=DIR for a static site (--transform-for-static-hosting).
DOC_TARGETS := BluetoothCore HCI GAP L2CAP ATT GATT Storage DiscoveryCache SMP BluetoothCrypto TraceDecoding Host Bluejay
DOCS_OUTPUT ?=
docs: deps
	@mkdir -p .build; $(SWIFT) package $(if $(DOCS_OUTPUT),--allow-writing-to-directory $(DOCS_OUTPUT)) generate-documentation \
	    --enable-experimental-combined-documentation $(foreach t,$(DOC_TARGETS),--target $(t)) \
	    $(if $(DOCS_OUTPUT),--output-path $(DOCS_OUTPUT) --transform-for-static-hosting) > .build/docs.log 2>&1 \
	    || { cat .build/docs.log; exit 1; }; cat .build/docs.log
	@if grep -q '^warning:' .build/docs.log; then echo "docs: $$(grep -c '^warning:' .build/docs.log) DocC warnings (above)"; exit 1; fi
	@echo "docs: no warnings"

# CI's ThreadSanitizer shards, together: `make test` on the ThreadSanitizer build (see `test`;
# CI runs it in two halves, TEST_PART=rest and TEST_PART=command-line).
test-tsan-lane:
	@$(MAKE) --no-print-directory test SANITIZE=thread

# Races that only load brings out: the integration suites (debug build) and the suites of
# `make test SANITIZE=thread`, side by side, STRESS_RUNS times (default 3) with STRESS_BUSY busy
# loops beside them (default 2), every failure reported by test name with its output
# (Fixtures/stress/run.sh). Run it before landing a change to concurrency or to a
# connection's lifecycle. Not part of make test: it takes about 15 minutes a run.
test-stress: deps venv build
	@$(MAKE) --no-print-directory sanitized-build SANITIZE=thread
	SWIFT="$(SWIFT)" TSAN_SKIPS="--skip CorpusTests $(foreach s,$(TSAN_SKIP),--skip $(s))" Fixtures/stress/run.sh

# The oldest Swift the package supports: Debian 13's own (swiftlang 6.0.3), in a Debian 13
# root of the project's (Fixtures/debian13/root.sh: mmdebstrap into .build/debian13-amd64,
# made once and reused), building every product, the test bundles and the example apps
# (Fixtures/debian13/build.sh: a chroot, its own copy of the source and scratch folder under
# .build/swift60). Builds only; nothing is run. Needs root (mmdebstrap, chroot, mount).
# SWIFT60_TESTS=no builds the products alone, SWIFT60_EXAMPLES="" leaves the examples out:
# CI's stage (the test bundles and the examples are built by `make test` and `make consumer`).
SWIFT60_TESTS    ?= yes
SWIFT60_EXAMPLES ?= $(EXAMPLES)
swift60:
	$(SUDO) Fixtures/debian13/root.sh
	$(SUDO) env TESTS=$(SWIFT60_TESTS) EXAMPLES="$(SWIFT60_EXAMPLES)" Fixtures/debian13/build.sh

# bluejay for boards: bluejay and bluejay-gateway for aarch64-unknown-linux-gnu with Debian
# 13's Swift (swiftlang 6.0.3), the Swift runtime linked in (--static-swift-stdlib: a board
# needs no Swift; the gateway links the board's OpenSSL, libssl3t64), left at .build/arm64/bluejay
# and .build/arm64/bluejay-gateway, the arm64 root they were built against and run in at
# .build/arm64/root; then run under qemu-aarch64 (Fixtures/arm64/check.py): against the
# Bumble peer (info, scan, gatt, read, write, listen --count, pair; serve read by the host's
# x86 bluejay), `bluejay trace` over every real trace byte for byte against the x86 build,
# bluejay-bench's receive path as an aarch64/x86 ratio (emulation), and the test suites of
# the layers below Bluejay. It ends with a table (checks, sizes, times). Needs root
# (mmdebstrap, chroot, mount); everything is reused on the next run (Fixtures/arm64/run.sh).
# Cross-compiled (Debian's amd64 swiftlang against an arm64 root of the same archive, through
# a Swift SDK: Fixtures/arm64/sdk.sh), not built natively in an arm64 root under qemu-user:
# Debian's arm64 swift-frontend under qemu took 17x the CPU time of the amd64 one compiling
# the same module (BluetoothCrypto, -Onone: 63 s against 3.8 s), so the release build that
# takes ~10 minutes here would take hours; and the cross build needs no arm64 package
# installed (no maintainer scripts under emulation), only unpacked.
arm64: deps venv
	@started=$$(date +%s) && $(SWIFT) build --product bluejay && \
	    $(SUDO) env HOST_BUILD_SECONDS=$$(( $$(date +%s) - started )) Fixtures/arm64/run.sh $(PEER_PY) $(BLUEJAY)

# Re-records the sessions of Fixtures/traces/sessions.txt from the Bumble peer (all, or
# NAMES="scan read-long"), checks that each decodes and replays with the same output, and
# leaves the new .btsnoop/.out/.err files for `git diff` (see Fixtures/traces/README.md).
traces: deps venv
	$(SWIFT) build --product bluejay
	Fixtures/traces/record.sh $(PEER_PY) $(BLUEJAY) $(NAMES)

# The whole suite under ThreadSanitizer, then AddressSanitizer (`make test SANITIZE=…`
# with nothing left out; the compiler-driven suites use the ordinary build's modules).
# SANITIZERS picks which (default both); CI runs thread (its sanitize shards), the decoders'
# address checks coming from `make fuzz` (libFuzzer with AddressSanitizer).
SANITIZERS ?= thread address
test-sanitize: deps venv build
	@for s in $(SANITIZERS); do $(MAKE) --no-print-directory test SANITIZE=$$s SANITIZE_SKIP= || exit 1; done

# The user channel on a real Linux kernel: a Debian kernel in QEMU with hci_vhci, virtual
# controllers from btvirt, the host's debug build run in the guest (Fixtures/vm). One boot
# runs every scenario; the exit status is the guest's.
# The whole boot's hang guard, not a speed check: the scenarios take about 150 s on an idle
# machine, and a CI run with two busy loops and a ThreadSanitizer build beside it passed
# every check and was still killed at the former 300 s.
VMTEST_TIMEOUT ?= 1200
vmtest: deps vm-deps build
	@rm -rf $(VM_ARTIFACTS) && mkdir -p $(VM_ARTIFACTS)
	VM_TIMEOUT=$(VMTEST_TIMEOUT) VM_RW="$(VM_ARTIFACTS)" VM_ARTIFACTS="$(VM_ARTIFACTS)" VM_ENV=VM_ARTIFACTS Fixtures/vm/run.sh Fixtures/vm/scenarios.sh

# bluejay against BlueZ in the same VM (docs/Benchmarks.md, "bluejay against BlueZ, in a VM"): our
# `bluejay serve` on hci1 as the peripheral, on hci0 in turn bluejay and the kernel's host
# stack + bluetoothd + dbus-daemon + bluetoothctl, the same jobs interleaved
# (Fixtures/vm/bench.sh). bluejay is the board binary (`make static`: what a board runs, its
# RSS and CPU the ones to hold against BlueZ's). Medians to bench/vm-results.json, the table
# printed. A benchmark, not a test: not part of `make test`. KVM where the machine has it, else TCG.
VMBENCH_RUNS   ?= 3
VMBENCH_WINDOW ?= 5
VMBENCH_OUT    := $(CURDIR)/artifacts/vmbench
vmbench: deps vm-deps static
	@rm -rf $(VMBENCH_OUT) && mkdir -p $(VMBENCH_OUT)
	VM_TIMEOUT=1800 VM_RW="$(VMBENCH_OUT)" BENCH_OUT="$(VMBENCH_OUT)" BENCH_RUNS=$(VMBENCH_RUNS) BENCH_WINDOW=$(VMBENCH_WINDOW) \
	    BLUEJAY=$(CURDIR)/$(STATIC_BINARY) VM_ENV="BENCH_OUT BENCH_RUNS BENCH_WINDOW BLUEJAY" Fixtures/vm/run.sh Fixtures/vm/bench.sh
	$(PYTHON) Fixtures/vm/bench-report.py $(VMBENCH_OUT)/runs.jsonl --output bench/vm-results.json $(if $(VM_ACCEL),--accel $(VM_ACCEL))

# The main job against the bundled virtual peripheral: start the peer, show its controller,
# run the heart-rate demo on the Bluejay API (scan, connect, read, listen, a background task,
# listen again, disconnect), then decode what was captured.
demo: deps venv
	$(SWIFT) build --product bluejay
	@set -e; out=$$(mktemp); \
	$(PEER_PY) $(PEER) > $$out 2> $$out.log & peer=$$!; \
	trap 'kill $$peer 2>/dev/null; rm -f $$out $$out.log' EXIT; \
	for i in $$(seq 1 100); do grep -q '^READY' $$out && break; sleep 0.1; done; \
	grep -q '^READY' $$out || { echo "the test peer did not start:"; cat $$out.log; exit 1; }; \
	transport=$$(sed -n 's/^READY transport=\([^ ]*\).*/\1/p' $$out); \
	echo "== peer: $$(cat $$out)"; \
	echo "== bluejay info --transport $$transport"; \
	$(BLUEJAY) info --transport $$transport; \
	echo "== bluejay demo --transport $$transport"; \
	BLUEJAY_STORE=$$(mktemp -d) $(BLUEJAY) demo --transport $$transport --capture $(DEMO_CAPTURE); \
	echo "== bluejay trace $(DEMO_CAPTURE) --summary"; \
	$(BLUEJAY) trace $(DEMO_CAPTURE) --summary

# The gateway against the bundled virtual peripherals (the Bumble peer: a connectable
# heart-rate sensor and three thermometers that only advertise, BTHome, ATC and Ruuvi) and a
# local mosquitto on a free port: the broker's lines are shown as they come, and it exits 0
# once decoded values of each kind of device have arrived (Fixtures/gateway/demo.sh).
# FOLLOW=1 keeps it running until Ctrl-C.
gateway-demo: deps venv
	$(SWIFT) build --product bluejay-gateway
	FOLLOW=$(FOLLOW) Fixtures/gateway/demo.sh $(PEER_PY) .build/debug/bluejay-gateway

# Every fuzz target under libFuzzer and AddressSanitizer (Fuzz/run.sh, docs/Testing.md "Fuzzing"):
# FUZZ_TIME seconds each, or FUZZ_RUNS inputs each; FUZZ_TARGETS="att smp" picks some.
# Seeds come from Fixtures/traces, Fixtures/real-traces and ../shared/traces (if there); a crash is left in artifacts/fuzz/.
FUZZ_TIME    ?= 60
FUZZ_RUNS    ?=
FUZZ_TARGETS ?=
fuzz: deps
	SWIFT="$(SWIFT)" FUZZ_TIME="$(FUZZ_TIME)" FUZZ_RUNS="$(FUZZ_RUNS)" FUZZ_TARGETS="$(FUZZ_TARGETS)" Fuzz/run.sh

# Side-by-side speed and memory: bluejay against tshark and Bumble's host, one run.
# BENCH_BASELINE=REV also builds bluejay-bench at that commit (a worktree under .build)
# and runs its receive and app paths (seqpacket, bluejay-listen, central-values) interleaved
# with this one's, mode by mode, for ratios that noise cannot move.
BENCH_BASELINE ?=
BASELINE_DIR   := .build/bench-baseline
bench: deps venv
	$(SWIFT) build -c release --product bluejay
	$(SWIFT) build -c release --product bluejay-bench
	$(SWIFT) build -c release --product bluejay-gateway
	@if [ -n "$(BENCH_BASELINE)" ]; then \
	    rm -rf $(BASELINE_DIR) && git worktree prune && \
	    git worktree add --detach $(BASELINE_DIR) $(BENCH_BASELINE) && \
	    (cd $(BASELINE_DIR) && $(SWIFT) build -c release --product bluejay-bench); \
	fi
	@rm -rf .build/benchmark-results && mkdir -p .build/benchmark-results
	$(SWIFT) package $(BENCH_PACKAGE) --allow-writing-to-directory $(CURDIR)/.build/benchmark-results benchmark --target BluejayBenchmarks \
	    --format metricP90AbsoluteThresholds --path $(CURDIR)/.build/benchmark-results --no-progress
	$(MAKE) --no-print-directory static
	$(PEER_PY) Fixtures/bench/bench.py --bluejay .build/release/bluejay --bench .build/release/bluejay-bench \
	    --static $(STATIC_BINARY) --benchmarks .build/benchmark-results --gateway .build/release/bluejay-gateway \
	    $(if $(BENCH_BASELINE),--baseline-bench $(BASELINE_DIR)/.build/release/bluejay-bench)

# The in-memory paths on package-benchmark (Benchmarks/BluejayBenchmarks): heap allocations
# per run held against Benchmarks/Thresholds (they do not depend on the machine; times are
# not checked). A debug build: CI's bench-check stage. The suite is a package of its own,
# Benchmarks/Package.swift (ordo-one/benchmark's trait needs tools 6.1; the main package
# stays at 6.0 for Debian 13's Swift, make swift60), which depends on this one by path and
# builds in BENCH_SCRATCH. The plugin preloads its own (release) malloc interposer;
# LD_LIBRARY_PATH makes the debug benchmark load that same one instead of its debug copy
# (two interposers call each other without end). After a deliberate change,
# `make bench-thresholds` records new ones.
# The app's paths (bluejay-listen-244, central-values-244) are left out of both: their counts
# hang on how the main actor's and the stack's threads meet (41K to 50K allocations per run
# of 10,000 values, one release run), so no tolerance would pass them and still catch one
# allocation more per value; `make bench` reports them (bench/results.json, `app`).
#
# Before those counts, BluetoothCrypto's constant time, measured (docs/Security.md "Constant time"):
# bluejay-ct, built in release (the property belongs to the optimised code), runs dudect's
# fixed-against-random t-test on P-256 and AES with secret inputs and fails above |t| = 10.
# Its self-check goes first: a leak added by hand must be flagged, or the harness is broken.
BENCH_SCRATCH ?= .build/benchmarks
BENCH_PACKAGE := --package-path $(CURDIR)/Benchmarks --scratch-path $(CURDIR)/$(BENCH_SCRATCH)
BENCH_RUN   := LD_LIBRARY_PATH=$(CURDIR)/$(BENCH_SCRATCH)/x86_64-unknown-linux-gnu/release $(SWIFT) package $(BENCH_PACKAGE)
BENCH_FLAGS := --target BluejayBenchmarks --metric mallocCountTotal --benchmark-build-configuration debug \
	    --skip 'bluejay-listen-244|central-values-244' --path $(CURDIR)/Benchmarks/Thresholds --no-progress
CT_BINARY   := .build/release/bluejay-ct
bench-check:
	$(SWIFT) build -c release --product bluejay-ct
	$(CT_BINARY) --self-check
	$(CT_BINARY)
	@$(BENCH_RUN) benchmark thresholds check $(BENCH_FLAGS); status=$$?; \
	if [ $$status = 4 ]; then echo "bench-check FAILED: allocations fell below the thresholds; record them with 'make bench-thresholds' and commit Benchmarks/Thresholds"; exit 1; fi; \
	if [ $$status != 0 ]; then echo "bench-check FAILED: allocations differ from Benchmarks/Thresholds (exit $$status): a table saying BETTER is a fall, to record with 'make bench-thresholds'; otherwise a rise"; fi; exit $$status
bench-thresholds:
	$(BENCH_RUN) --allow-writing-to-package-directory benchmark thresholds update $(BENCH_FLAGS)

# The binary for boards (docs/Benchmarks.md "Footprint"): release, -Osize on the command line (no
# unsafe flag in Package.swift, so the package can be pinned by version), the Swift
# libraries linked in
# (--static-swift-stdlib), linked by lld: no symbols exported (--export-dynamic, which the static Swift libraries ask
# for, kept every public function and a 1.7 MB symbol table), relative relocations packed
# (DT_RELR: 1.4 MB less; needs glibc 2.36 on the board), no DWARF unwind tables (3.2 MB;
# Fixtures/static/no-unwind-tables.ld says why nothing needs them), and the functions a board runs laid
# out together (Fixtures/static/bluejay.order, from `make symbol-order`), so that far fewer
# of the binary's pages become resident. Stripped last.
# -Osize for every module took 1.0 MB off the file and nothing off listen's RSS, and decodes
# traces 1.27x slower on the board (the speed rows of make bench use the ordinary release
# build); per-module -Osize would need unsafe flags in the manifest. STATIC_FLAGS without
# its -Osize for -O.
# -function-sections puts each Swift function in a section of its own, as the static Swift
# libraries already are: --gc-sections then drops our unused functions one by one instead
# of keeping a source file's whole .text for one live function (0.22 MB), and the order
# file can place each of our functions.
STATIC_DIR    := .build/static
STATIC_FLAGS  ?= -Xswiftc -Osize -Xswiftc -Xfrontend -Xswiftc -function-sections
STATIC_BINARY := $(STATIC_DIR)/bluejay-stripped
STATIC_ORDER  := Fixtures/static/bluejay.order
# STATIC_RELR=no for a board whose glibc is older than 2.36 (the binary built on Debian 12
# needs 2.35 for its symbol versions anyway); STATIC_UNWIND_TABLES=yes keeps .eh_frame.
# SwiftPM does not relink when only the linker's options change, so a changed toolset takes
# the old binary away.
STATIC_RELR_FLAGS   := $(if $(filter no,$(STATIC_RELR)),,"-z", "pack-relative-relocs", )
STATIC_UNWIND_FLAGS := $(if $(filter yes,$(STATIC_UNWIND_TABLES)),,"-T", "$(CURDIR)/Fixtures/static/no-unwind-tables.ld", "--no-eh-frame-hdr", )
LLD           := $(dir $(shell command -v $(SWIFT) 2>/dev/null || echo /opt/swift/usr/bin/swift))ld.lld
static:
	@mkdir -p $(STATIC_DIR)
	@# The Swift driver does not recompile when only a -Xfrontend flag changes: changed
	@# STATIC_FLAGS clean the board build first (which empties STATIC_DIR).
	@echo '$(STATIC_FLAGS)' > $(STATIC_DIR).flags.new
	@cmp -s $(STATIC_DIR).flags.new $(STATIC_DIR)/flags || $(SWIFT) package clean --scratch-path $(STATIC_DIR)
	@mkdir -p $(STATIC_DIR) && mv $(STATIC_DIR).flags.new $(STATIC_DIR)/flags
	@printf '{"schemaVersion": "1.0", "linker": {"path": "%s", "extraCLIOptions": [%s]}}\n' "$(LLD)" \
	    '"--no-export-dynamic", $(STATIC_RELR_FLAGS)"--symbol-ordering-file=$(CURDIR)/$(STATIC_ORDER)", "--no-warn-symbol-ordering", $(STATIC_UNWIND_FLAGS)"-Map=$(CURDIR)/$(STATIC_DIR)/bluejay.map"' \
	    > $(STATIC_DIR)/toolset.json.new
	@cmp -s $(STATIC_DIR)/toolset.json.new $(STATIC_DIR)/toolset.json || rm -f $(STATIC_DIR)/release/bluejay
	@mv $(STATIC_DIR)/toolset.json.new $(STATIC_DIR)/toolset.json
	$(SWIFT) build -c release --static-swift-stdlib --product bluejay --scratch-path $(STATIC_DIR) $(STATIC_FLAGS) \
	    --toolset $(CURDIR)/$(STATIC_DIR)/toolset.json
	strip -o $(STATIC_BINARY) $(STATIC_DIR)/release/bluejay

# Re-records Fixtures/static/bluejay.order from the board binary's own build (valgrind).
symbol-order: deps venv static
	@$(MAKE) --no-print-directory deps APT_PACKAGES=valgrind
	$(PEER_PY) Fixtures/bench/symbol_order.py --binary $(STATIC_DIR)/release/bluejay --output $(STATIC_ORDER)
	@# SwiftPM does not know the linker reads the order: take the binary away so the next
	@# make static links it again.
	rm -f $(STATIC_DIR)/release/bluejay $(STATIC_BINARY)

# Where the bytes go: the static binary's size by component (from the link map), and the
# resident memory of `bluejay listen` against the Bumble peer, idle and flooded, by cause.
FOOTPRINT_SECONDS ?= 20
footprint: deps venv static
	$(PEER_PY) Fixtures/bench/footprint.py --static $(STATIC_BINARY) --map $(STATIC_DIR)/bluejay.map --seconds $(FOOTPRINT_SECONDS)

# The code's layout (issue 50): swift-format's pretty printer as .swift-format sets it (120
# columns, 4-space indents, line breaks the author made kept; no rewriting rules), and every
# module a target imports declared in Package.swift (Fixtures/lint/declared_imports.py).
# `make format` rewrites the files; `make lint` checks them, as every CI run does. Both use
# the toolchain's own swift-format.
FORMATTED := Package.swift Sources Tests Benchmarks Fuzz Examples
format:
	$(SWIFT) format format --in-place --recursive --configuration .swift-format $(FORMATTED)

lint:
	$(SWIFT) format lint --strict --recursive --configuration .swift-format $(FORMATTED)
	python3 Fixtures/lint/declared_imports.py

clean:
	rm -rf .build $(VENV) $(DEMO_CAPTURE) .vmcache
