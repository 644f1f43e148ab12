# kforge: see README.md. Every target is idempotent.
SHELL := /bin/bash
BUILD_DIR ?= build
PYTHON ?= python3
JOBS ?= $(shell nproc)

APT_PACKAGES := build-essential cmake ninja-build pkg-config git \
  libcurl4-openssl-dev nlohmann-json3-dev libcli11-dev libfmt-dev libsqlite3-dev \
  libpq-dev libtomlplusplus-dev libgtest-dev libgmock-dev libssl-dev clang-format \
  chromium
PIP_PACKAGES := torch numpy pytest

.PHONY: setup build test unit-test py-test demo format clean

setup:
	@echo "make setup: Debian packages: $(APT_PACKAGES)"
	@if command -v apt-get >/dev/null; then \
	  SUDO=$$([ "$$(id -u)" = 0 ] || echo sudo); \
	  missing=$$(for p in $(APT_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || echo $$p; done); \
	  if [ -n "$$missing" ]; then \
	    echo "installing: $$missing"; \
	    $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $$missing; \
	  else echo "all Debian packages present"; fi; \
	else echo "no apt-get: install the packages above yourself"; fi
	@echo "make setup: PyPI packages: $(PIP_PACKAGES)"
	@$(PYTHON) -c "import torch, numpy, pytest" 2>/dev/null && echo "all PyPI packages present" || \
	  $(PYTHON) -m pip install -q $(PIP_PACKAGES)

build:
	@cmake -S . -B $(BUILD_DIR) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
	@ninja -C $(BUILD_DIR) -j $(JOBS)

unit-test: build
	cd $(BUILD_DIR) && ctest --output-on-failure -LE gpu -j $(JOBS)

py-test: build
	KFORGE_BIN=$(abspath $(BUILD_DIR))/kforge $(PYTHON) -m pytest -q harness/tests tests/scenario

test: unit-test py-test

demo: build
	@bash examples/demo.sh

format:
	@find src bench -name '*.cc' -o -name '*.h' | xargs clang-format -i

clean:
	rm -rf $(BUILD_DIR)
