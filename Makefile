# `make`      : set up .venv (.venv311 for Python 3.11), build the book, release the student
#               notebooks, grade the demo class.
# `make test` : the whole test suite (what .ci/run calls).
SHELL := /bin/bash
# Two pinned toolchains. current (the primary): Python 3.12 or 3.13, the JAX the book teaches
# (requirements.txt), constraints-py312.txt, .venv. legacy: Python 3.11, JAX 0.10.2 (the last
# pip offers there), constraints.txt, .venv311. `make TOOLCHAIN=legacy` picks one; so does `make
# PYTHON=python3.11` (any interpreter that is not 3.11 is `current`). Without either: current
# where a Python 3.12 or later runs, legacy where only a Python 3.11 does (a machine with only
# Python 3.11 still gets a working course). "Runs": a name on the PATH is not enough, since pyenv
# puts a shim on it for every version it has, and a shim of a version pyenv has not chosen only
# says "command not found" (tests/test_makefile_toolchain.py).
VERSION_OF := import sys; print("%d.%d" % sys.version_info[:2])
# $(call runs_as,NAME,VERSIONS): NAME's path if it runs and its major.minor is one of VERSIONS.
runs_as = $(if $(filter $(2),$(shell $(1) -c '$(VERSION_OF)' 2>/dev/null)),$(shell command -v $(1)))
# Where pyenv has a version it has not chosen, its shim does not run, but the version's own
# interpreter does: for today's toolchain those are asked after the names on the PATH (a fresh
# CI machine has pyenv's 3.11 chosen and 3.12 beside it, so `make` finds 3.12).
PYENV_PYTHONS = $(sort $(wildcard $(shell pyenv root 2>/dev/null)/versions/$(1).*/bin/python$(1)))
ifndef PYTHON
  LEGACY_PYTHON := $(call runs_as,python3.11,3.11)
  CURRENT_PYTHON := $(firstword $(foreach p,python3.12 python3.13 python3 $(call PYENV_PYTHONS,3.12) $(call PYENV_PYTHONS,3.13),$(call runs_as,$(p),3.12 3.13 3.14)))
endif
ifndef TOOLCHAIN
  ifdef PYTHON
    TOOLCHAIN := $(if $(filter 3.11,$(shell $(PYTHON) -c '$(VERSION_OF)')),legacy,current)
  else
    TOOLCHAIN := $(if $(CURRENT_PYTHON),current,$(if $(LEGACY_PYTHON),legacy,current))
  endif
endif
ifeq ($(TOOLCHAIN),current)
  PYTHON ?= $(CURRENT_PYTHON)
  WANTED := Python 3.12 or later (python3.12, python3.13 or python3)
  VENV := .venv
  CONSTRAINTS := constraints-py312.txt
else
  PYTHON ?= $(LEGACY_PYTHON)
  WANTED := Python 3.11 (python3.11)
  VENV := .venv311
  CONSTRAINTS := constraints.txt
endif
# requirements.txt pins the JAX the book teaches; the legacy toolchain takes jax and jaxlib from
# its constraints file instead (0.10.2).
REQUIREMENTS := $(if $(filter legacy,$(TOOLCHAIN)),$(VENV)/requirements-legacy.txt,requirements.txt)
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# A virtual environment of the other toolchain under this one's name (a .venv made with Python
# 3.11 before the primary toolchain became 3.12's) would be taken as set up: say so instead.
VENV_VERSION := $(if $(wildcard $(BIN)/python),$(shell $(BIN)/python -c '$(VERSION_OF)' 2>/dev/null))
ifneq ($(VENV_VERSION),)
  ifneq ($(filter 3.11,$(VENV_VERSION)),$(if $(filter legacy,$(TOOLCHAIN)),3.11,))
    $(error $(VENV) holds Python $(VENV_VERSION), not the $(TOOLCHAIN) toolchain's $(WANTED): \
      remove it (rm -rf $(VENV)) and run make again)
  endif
endif
# nbgrader's gradebook runs `alembic` as a subprocess: the venv's tools must be on PATH.
export PATH := $(abspath $(BIN)):$(PATH)

.PHONY: all setup kernels book release demo test lint constraints clean check-newest-jax

all: book release demo

setup: $(STAMP)

$(STAMP): requirements.txt $(CONSTRAINTS) pyproject.toml scripts/install_browser.sh scripts/ipython_kernel_config.py
	bash scripts/install_browser.sh
	@test -x $(BIN)/python || test -n "$(PYTHON)" || { echo "make: no $(WANTED) runs on this PATH; install one, or name it: make PYTHON=/path/to/python" >&2; exit 1; }
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(if $(filter legacy,$(TOOLCHAIN)),sed -E 's/^(jax|jaxlib)==.*/\1/' requirements.txt > $(REQUIREMENTS))
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -r $(REQUIREMENTS) -c $(CONSTRAINTS)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --no-deps --no-build-isolation -e .
	# nbgrader's Create Assignment panel edits the cell metadata the grader reads: not for students.
	$(BIN)/jupyter labextension disable --level=sys_prefix nbgrader:create-assignment
	# The cell policy in the environment's kernels (autograder/notebook_check.py says why).
	install -D -m 644 scripts/ipython_kernel_config.py $(VENV)/etc/ipython/ipython_kernel_config.py
	touch $@

# The custom kernels of Part V, built from source: the CPU handler with g++ into a shared library
# the book loads, the CUDA handler with nvcc for Hopper (sm_90) to prove it compiles (no GPU needed).
# The XLA FFI headers ship with jaxlib. Skipped, with a note, where nvcc is missing.
KERNEL_SRC := jaxcourse/kernels
# Each toolchain's own folder (jaxcourse/kernels/__init__.py's BUILD): JAX 0.10.2's XLA refuses a
# handler built against JAX 0.12's FFI headers (it declares a newer FFI API).
KERNEL_OUT := $(if $(filter legacy,$(TOOLCHAIN)),_build/kernels-legacy,_build/kernels)
FFI_INCLUDE := $(BIN)/python -c 'import jax; print(jax.ffi.include_dir())'
NVCC ?= $(shell command -v nvcc || echo /usr/local/bin/nvcc)
kernels: $(KERNEL_OUT)/librms_norm.so $(KERNEL_OUT)/librms_norm_cuda.so

$(KERNEL_OUT)/librms_norm.so: $(KERNEL_SRC)/rms_norm.cc | $(STAMP)
	mkdir -p $(KERNEL_OUT)
	g++ -std=c++17 -O2 -fPIC -shared -isystem "$$($(FFI_INCLUDE))" $< -o $@

$(KERNEL_OUT)/librms_norm_cuda.so: $(KERNEL_SRC)/rms_norm.cu | $(STAMP)
	mkdir -p $(KERNEL_OUT)
	if [ -x "$(NVCC)" ]; then \
	  $(NVCC) -std=c++17 -O2 -arch=sm_90 -Xcompiler -fPIC -shared -isystem "$$($(FFI_INCLUDE))" \
	    $< -o $@; \
	else echo "nvcc not found: the CUDA kernel was not compiled"; fi

# Warnings are errors; a cell that raises without the `raises-exception` tag fails the build.
# jupyter-cache re-executes only chapters whose code changed. Then the Simplified Chinese edition
# into _build/html/zh from locales/zh_CN (warnings are errors there too); its chapters come from
# the same jupyter-cache, so none is executed twice. Then the PDF (`make pdf`, below: ~45 s).
book: $(STAMP) kernels
	$(BIN)/jupyter-book build . --warningiserror --keep-going
	$(BIN)/python -m jaxcourse.i18n_site zh
	$(BIN)/python -m jaxcourse.book_pdf --unless-no-chromium

# solutions/ -> assignments/ through nbgrader's own generate_assignment.
release: $(STAMP)
	$(BIN)/python -m autograder release

# Builds a demo class from the sources and grades it; prints the grade table.
demo: $(STAMP)
	$(BIN)/python -m autograder demo --out _build/demo

# Two pytest-xdist workers (TEST_WORKERS=1: one plain process), each taking whole modules, the
# costliest first (tests/conftest.py, COSTLIEST_FIRST); what several modules grade (the demo
# classes, each assignment's notebooks in process) is graded once, by the first worker to ask.
TEST_WORKERS ?= 2
# --durations: CI's log says where its time went (the 25-minute budget, README "Tests").
test: $(STAMP) book
	$(BIN)/python -m pytest $(if $(filter-out 1,$(TEST_WORKERS)),-n $(TEST_WORKERS) --dist loadfile --no-loadscope-reorder) --durations=40 $(ARGS)

# The inner loop: every test not marked `slow` (no whole classes graded by the real command, no
# built book, no browser), so the book is not built. Narrow it with MARK="ps1 and jvp" (markers:
# README, "Tests"); ARGS go to pytest as they are.
.PHONY: test-fast
test-fast: $(STAMP)
	$(BIN)/python -m pytest -m "not slow$(if $(MARK), and ($(MARK)))" $(ARGS)

# The second toolchain's tier (Python 3.11, JAX 0.10.2), a release check (run it when a pin moves
# and before a term; .ci/run leaves it out to keep CI within 25 minutes):
# its set-up and kernels, every chapter executed on it, its demo classes compared check by check
# with both toolchains' records, its fast tier (scripts/test_legacy.sh says what and why).
.PHONY: test-legacy
test-legacy:
	$(MAKE) --no-print-directory TOOLCHAIN=legacy setup kernels
	bash scripts/test_legacy.sh

# Is a grade a function of the code? Every notebook of every assignment under 10 course secrets x
# 3 student ids (tests/contract/test_score_stability.py): hours of CPU, so not part of `test`.
.PHONY: test-stability
test-stability: $(STAMP)
	$(BIN)/python -m pytest --stability -m "stability$(if $(MARK), and ($(MARK)))" $(ARGS)

lint: $(STAMP)
	$(BIN)/ruff check .

# Keeps the file's opening comment (why the toolchain's pins are what they are).
constraints: $(STAMP)
	{ sed -n '/^#/!q;p' $(CONSTRAINTS); $(BIN)/python -m pip freeze --exclude-editable; } \
	  > $(CONSTRAINTS).new && mv $(CONSTRAINTS).new $(CONSTRAINTS)

clean:
	rm -rf _build gradebook.db

# The book as one PDF, _build/pdf/book.pdf (jaxcourse/book_pdf.py): `jupyter-book build
# --builder singlehtml` (the HTML build's environment and jupyter-cache: nothing re-read or
# re-executed after `make book`), printed by Debian's headless Chromium; no TeX, no network.
.PHONY: pdf
pdf: $(STAMP)
	$(BIN)/python -m jaxcourse.book_pdf

# Before a term: what the newest JAX the index offers would change (scripts/check_newest_jax.py).
# A throwaway venv under _build/newest-jax with that JAX and the other pins; there Part V's
# kernels, the English book (its chapters' outputs compared with this build's: hence `book`
# first), the demo classes against tests/fixtures/toolchains/, the drift guard's names and the
# fast tier of the tests; one report, _build/newest-jax/report.md (README says how to read it).
# ARGS go to the script (--jax VERSION, --skip tests, --report FILE).
.PHONY: check-newest-jax
check-newest-jax: $(STAMP) book
	$(BIN)/python scripts/check_newest_jax.py $(ARGS)
