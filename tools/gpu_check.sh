#!/usr/bin/env bash
# tools/gpu_check.sh: irgrad's GPU backend on this machine's NVIDIA GPU, in one go.
#
#   tools/gpu_check.sh [WHEELS_DIR]
#
# 1. Finds the CUDA toolkit (nvcc or ptxas on PATH, else /usr/local/cuda) and shows the GPU.
# 2. Makes sure the project's .venv has irgrad and pycuda. A GPU machine may have CUDA's
#    compiler and headers but neither pycuda nor a package registry: the .venv is then made
#    over the machine's own python3 (its numpy, llvmlite, pytest, torch) and the rest comes
#    from WHEELS_DIR (default: $IRGRAD_GPU_WHEELS, else ../gpu-wheels, else ./gpu-wheels,
#    else ./.whl): the pure-Python wheels irgrad and pycuda need, pycuda as a wheel built
#    beforehand, or else its source distribution, built there (minutes). tools/gpu_wheels.sh
#    fetches and builds all of it into ./.whl on a machine with a registry (7 MB).
# 3. Runs the test suites that need ptxas or a GPU (tests/unit/backends/gpu/test_gpu_ptx.py, the lit
#    tests of tests/filecheck/gpu, which include the `REQUIRES: cuda` ones).
# 4. Runs every op, the example and gradient programs and W1/W2/W4 on the GPU against the
#    reference interpreter, and a program through `ig.jit(backend="gpu")`'s disk cache in two
#    fresh processes (benchmarks/gpu_check.py: a table, build/gpu_check.json).
# 5. Times W1, W2 and W4 (benchmarks/gpu_workloads.py: a table, against PyTorch on the same
#    GPU where torch with CUDA is installed).
# GPU_CHECK_SKIP_TESTS=1 skips step 3 (a rerun of the checks and timings alone);
# GPU_CHECK_SETUP_ONLY=1 stops after step 2 (then run benchmarks/gpu_*.py by hand).
# Exit code: 0 when every check agrees, 1 otherwise, 2 when there is no usable GPU.
# Budget: 4 minutes on an H200 with ./.whl (2026-11-29: 234 s, 134 of them the pytest step);
# it must stay under 10.
set -uo pipefail

cd "$(dirname "$0")/.."
ROOT=$(pwd)
PY="$ROOT/.venv/bin/python"
WHEELS="${1:-${IRGRAD_GPU_WHEELS:-}}"
if [ -z "$WHEELS" ]; then
  for candidate in "$ROOT/../gpu-wheels" "$ROOT/gpu-wheels" "$ROOT/.whl"; do
    if [ -d "$candidate" ]; then WHEELS="$candidate"; break; fi
  done
fi
START=$(date +%s)
step() { printf '\n== %s (%ds)\n' "$1" "$(( $(date +%s) - START ))"; }

step "CUDA toolkit and GPU"
CUDA_BIN=""
for tool in nvcc ptxas; do
  if command -v "$tool" >/dev/null; then CUDA_BIN=$(dirname "$(readlink -f "$(command -v "$tool")")"); break; fi
done
if [ -z "$CUDA_BIN" ] && [ -d /usr/local/cuda/bin ]; then CUDA_BIN=/usr/local/cuda/bin; fi
if [ -n "$CUDA_BIN" ]; then
  export PATH="$CUDA_BIN:$PATH"
  export CUDA_ROOT="${CUDA_ROOT:-$(dirname "$CUDA_BIN")}"
  echo "CUDA: $CUDA_ROOT"; ptxas --version | tail -1
else
  echo "no CUDA toolkit found (nvcc/ptxas); PTX checks will be skipped"
fi
if command -v nvidia-smi >/dev/null; then
  nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
else
  echo "nvidia-smi not found"
fi

step "Python environment"
# Without a registry (the GPU machines): a venv that also sees the machine's own python3
# packages (numpy, pytest, llvmlite, torch; that python3 may itself be a venv, which
# --system-site-packages would skip, hence the .pth file), and the rest from $WHEELS.
if [ ! -x "$PY" ]; then
  # The machine's python3 may lack ensurepip; its own pip then serves (through the .pth).
  python3 -m venv .venv 2>/dev/null || { rm -rf .venv; python3 -m venv --without-pip .venv; } || exit 2
  python3 -c "import site; print('\n'.join(site.getsitepackages()))" \
    > "$("$PY" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')/_machine_python.pth" || exit 2
  if [ -n "$WHEELS" ]; then
    "$PY" -m pip install -q --no-index --find-links "$WHEELS" --no-build-isolation -e '.[test]' || exit 2
  else
    "$PY" -m pip install -q -e '.[test]' || exit 2
  fi
fi
if ! "$PY" -c "import pycuda.driver" 2>/dev/null; then
  if [ -n "$WHEELS" ]; then
    # A pycuda wheel built beforehand for this Python is taken first, else its source.
    echo "installing pycuda from $WHEELS"
    "$PY" -m pip install -q --no-index --find-links "$WHEELS" setuptools wheel 2>/dev/null || true
    CUDA_ROOT="${CUDA_ROOT:-/usr/local/cuda}" "$PY" -m pip install -q --no-index --find-links "$WHEELS" \
      --no-build-isolation pycuda || echo "pycuda did not install from $WHEELS"
  else
    echo "pycuda is missing and no wheels folder was given; trying the package registry"
    "$PY" -m pip install -q 'pycuda>=2024.1' || echo "pycuda could not be installed"
  fi
fi
"$PY" -c "import numpy, llvmlite, xdsl; print(f'numpy {numpy.__version__}, llvmlite {llvmlite.__version__}, xdsl {xdsl.__version__}')"
"$PY" - <<'EOF'
from irgrad.backends.gpu import cuda_unavailable_reason, find_libdevice
reason = cuda_unavailable_reason()
print("pycuda and a GPU: " + ("yes" if reason is None else f"NO ({reason})"))
print(f"libdevice: {find_libdevice()}")
from irgrad.backends.gpu.cublas import find_cublas
print(f"cuBLAS (large matmuls): {find_cublas() or 'NOT FOUND: GEMMs will run on the host (set IRGRAD_CUBLAS)'}")
EOF

if [ -n "${GPU_CHECK_SETUP_ONLY:-}" ]; then step "setup done"; exit 0; fi

status=0
if [ -z "${GPU_CHECK_SKIP_TESTS:-}" ]; then
  step "Tests that need ptxas or a GPU"
  PARALLEL=""
  if "$PY" -c "import xdist" 2>/dev/null; then PARALLEL="-n 8"; fi
  "$PY" -m pytest -q $PARALLEL tests/unit/backends/gpu/test_gpu_ptx.py || status=1
  PATH="$ROOT/.venv/bin:$PATH" "$ROOT/.venv/bin/lit" -s tests/filecheck/gpu tests/filecheck/lowering/gpu || status=1
fi

step "Every op, the programs and W1/W2/W4 on the GPU against the interpreter"
"$PY" benchmarks/gpu_check.py
check=$?
if [ "$check" -eq 2 ]; then
  echo "no usable GPU: nothing ran on a GPU"
  exit 2
fi
[ "$check" -eq 0 ] || status=1

step "Speed: W1, W2, W4"
"$PY" benchmarks/gpu_workloads.py || status=1

step "done: exit $status"
exit $status
