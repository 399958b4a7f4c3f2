#!/usr/bin/env bash
# The second toolchain's tier (`make test-legacy`, a release check that .ci/run leaves out): Python 3.11
# with JAX 0.10.2, the last JAX pip offers there, kept working beside the primary toolchain
# (Python 3.12 or later with the JAX the book teaches). `make test` has run the whole suite on the
# primary one; this runs on the second what could differ between the two releases, in about a
# third of the time the whole suite would take:
# 1. its set-up (.venv311 from constraints.txt) and Part V's kernels against its own FFI headers
#    (_build/kernels-legacy): the Makefile, before this script;
# 2. every chapter executed on JAX 0.10.2 (jaxcourse/legacy_book.py: the English book into
#    _build/legacy, with an execution cache of its own), then each chapter's outputs checked as
#    `make test` checks the primary build's (tests/book/test_executed_chapters.py): the chapters'
#    version-dependent claims assert what 0.10.2 does;
# 3. the demo classes graded on it and compared, check by check, with both toolchains' records
#    (tests/test_toolchains.py);
# 4. the fast tier of the tests (`-m "not slow"`, as `make test-fast`), in two workers.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=.venv311/bin
start=$(date +%s)
say() { echo "test-legacy: $* ($(( $(date +%s) - start )) s)"; }
"$BIN/python" -c 'import sys, jax; assert sys.version_info[:2] == (3, 11), sys.version; print("test-legacy: Python", sys.version.split()[0], "JAX", jax.__version__)'
"$BIN/python" -m jaxcourse.legacy_book
say "every chapter executed on this toolchain"
JAXCOURSE_BOOK_BUILD="$PWD/_build/legacy" "$BIN/python" -m pytest -p no:cacheprovider \
  tests/book/test_executed_chapters.py tests/test_toolchains.py
say "chapters' outputs and the demo classes checked"
"$BIN/python" -m pytest -p no:cacheprovider -n 2 --dist loadfile --no-loadscope-reorder -m "not slow"
say "fast tier passed"
