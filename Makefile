# Two entry points, each self-contained on a clean machine:
#   make demo   sets up .venv and runs the main job
#   make test   sets up .venv (with the `dist` extra: MPI) and runs every test (pytest + lit/FileCheck)
#   make bench  sets up .venv with the peers (torch, jax) and runs benchmarks/run_all.py
#   make mlir-check  installs upstream MLIR's mlir-opt (Debian's mlir-19-tools) and checks that
#               upstream reads every stage irgrad prints and irgrad reads upstream's print
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
export PATH := $(CURDIR)/$(BIN):$(PATH)

.PHONY: demo test unit lit bench clean mlir-check mlir-tools

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip

# Stamp files keep re-runs fast; they are rebuilt when pyproject.toml changes.
$(VENV)/.stamp-demo: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install -q -e '.[demo]'
	touch $@

$(VENV)/.stamp-bench: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install -q -e '.[bench,demo]'
	touch $@

$(VENV)/.stamp-test: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install -q -e '.[test,dist]'
	touch $@

demo: $(VENV)/.stamp-demo
	$(BIN)/python examples/demo.py

unit: $(VENV)/.stamp-test
	$(BIN)/python -m pytest -q -n auto tests/unit

lit: $(VENV)/.stamp-test
	$(BIN)/lit -sv tests/filecheck

# Upstream MLIR's mlir-opt (19 or newer) for tests/unit/driver/test_upstream_mlir_opt.py.
MLIR_OPT_FOUND = command -v mlir-opt >/dev/null || ls /usr/lib/llvm-*/bin/mlir-opt >/dev/null 2>&1

mlir-tools:
	@$(MLIR_OPT_FOUND) || (command -v apt-get >/dev/null && [ "$$(id -u)" = 0 ] && \
		apt-get install -y -q mlir-19-tools >/dev/null 2>&1) || \
		(echo "mlir-check: install Debian's mlir-19-tools (or set IRGRAD_MLIR_OPT to an mlir-opt >= 19)" >&2; exit 1)

mlir-check: $(VENV)/.stamp-test mlir-tools
	$(BIN)/python -m pytest -q -n auto tests/unit/driver/test_upstream_mlir_opt.py

# Both suites run even when the first fails; the target fails if either did.
test: $(VENV)/.stamp-test
	@# Chromium for the compile-report browser test, upstream mlir-opt for the MLIR syntax test,
	@# graphviz's dot for the docs' SVG pictures (each optional: its tests skip, saying so, without it).
	@command -v chromium >/dev/null || (command -v apt-get >/dev/null && [ "$$(id -u)" = 0 ] && \
		apt-get install -y -q chromium >/dev/null 2>&1) || true
	@command -v dot >/dev/null || (command -v apt-get >/dev/null && [ "$$(id -u)" = 0 ] && \
		apt-get install -y -q graphviz >/dev/null 2>&1) || true
	@$(MLIR_OPT_FOUND) || (command -v apt-get >/dev/null && [ "$$(id -u)" = 0 ] && \
		apt-get install -y -q mlir-19-tools >/dev/null 2>&1) || true
	@status=0; \
	$(BIN)/python -m pytest -q -n auto tests/unit || status=1; \
	$(BIN)/lit -s tests/filecheck || status=1; \
	exit $$status

# The peers (torch, jax) come from the `bench` extra. OPENBLAS_CORETYPE/OPENBLAS_L2_SIZE, set on
# some machines for old OpenBLAS builds, slow numpy's GEMM: unset for this command only.
# BENCH_ARGS=--results=benchmarks/RESULTS.md also writes the results file.
bench: $(VENV)/.stamp-bench
	env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE $(BIN)/python benchmarks/run_all.py $(BENCH_ARGS)

clean:
	rm -rf $(VENV) build *.egg-info
