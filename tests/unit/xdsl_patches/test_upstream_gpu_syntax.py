"""irgrad/xdsl_patches/upstream_gpu_syntax.py: MLIR's custom form of the gpu ops, read as upstream
mlir-opt 19 prints them (with their meaning) and printed back the same."""

from __future__ import annotations

import pytest
from xdsl.dialects import gpu

import irgrad  # noqa: F401  (applies the patches)
from irgrad.context import make_context
from irgrad.diagnostics import IRParseError, parse_module, verify_module

# Printed by upstream `mlir-opt` (MLIR 19.1.7) from hand-written input.
UPSTREAM = """\
module attributes {gpu.container_module} {
  func.func @host(%arg0: memref<64xf32>, %arg1: memref<64xf32>) {
    %c1 = arith.constant 1 : index
    %c64 = arith.constant 64 : index
    %memref = gpu.alloc  () : memref<64xf32>
    %0 = gpu.wait async
    %1 = gpu.memcpy async [%0] %memref, %arg0 : memref<64xf32>, memref<64xf32>
    gpu.wait [%1]
    gpu.launch_func  @kernels::@scale blocks in (%c1, %c1, %c1) threads in (%c64, %c1, %c1)  args(%memref : memref<64xf32>, %arg1 : memref<64xf32>)
    gpu.launch blocks(%arg2, %arg3, %arg4) in (%arg8 = %c1, %arg9 = %c1, %arg10 = %c1) threads(%arg5, %arg6, %arg7) in (%arg11 = %c64, %arg12 = %c1, %arg13 = %c1) {
      %2 = memref.load %memref[%arg5] : memref<64xf32>
      memref.store %2, %arg1[%arg5] : memref<64xf32>
      gpu.terminator
    }
    gpu.dealloc  %memref : memref<64xf32>
    return
  }
  gpu.module @kernels {
    gpu.func @scale(%arg0: memref<64xf32>, %arg1: memref<64xf32>) kernel attributes {known_block_size = array<i32: 64, 1, 1>} {
      %thread_id_x = gpu.thread_id  x
      %block_id_y = gpu.block_id  y
      %block_dim_z = gpu.block_dim  z
      %grid_dim_x = gpu.grid_dim  x
      %0 = memref.load %arg0[%thread_id_x] : memref<64xf32>
      gpu.barrier
      memref.store %0, %arg1[%thread_id_x] : memref<64xf32>
      gpu.return
    }
  }
}

"""


def _parse(text: str):
    module = parse_module(make_context(), text)
    verify_module(module)
    return module


def _one(module, op_type):
    (op,) = [op for op in module.walk() if isinstance(op, op_type)]
    return op


def test_upstream_gpu_forms_are_read_with_their_meaning():
    module = _parse(UPSTREAM)
    kernel = _one(module, gpu.FuncOp)
    assert kernel.kernel is not None and kernel.sym_name.data == "scale"
    assert list(kernel.attributes["gpu.known_block_size"].get_values()) == [64, 1, 1]
    launch = _one(module, gpu.LaunchFuncOp)
    assert str(launch.kernel) == "@kernels::@scale" and len(launch.kernelOperands) == 2
    assert launch.blockSizeX.owner.value.value.data == 64
    inline = _one(module, gpu.LaunchOp)
    body = inline.body.block
    assert inline.blockSizeX.owner.value.value.data == 64
    # MLIR's block argument order: block ids, thread ids, grid sizes, block sizes
    load = next(op for op in body.ops if op.name == "memref.load")
    assert load.operands[1] is body.args[3]
    memcpy = _one(module, gpu.MemcpyOp)
    assert memcpy.asyncToken is not None and len(memcpy.asyncDependencies) == 1
    assert memcpy.dst is _one(module, gpu.AllocOp).result
    waits = [op for op in module.walk() if isinstance(op, gpu.WaitOp)]
    assert [len(w.results) for w in waits] == [1, 0] and waits[1].asyncDependencies[0] is memcpy.asyncToken
    dims = [(op.name, op.dimension.data.value) for op in module.walk() if op.name.endswith(("_id", "_dim"))]
    assert dims == [("gpu.thread_id", "x"), ("gpu.block_id", "y"), ("gpu.block_dim", "z"), ("gpu.grid_dim", "x")]


def test_printing_gives_upstreams_text_back():
    text = str(_parse(UPSTREAM))
    for line in (
        "%memref = gpu.alloc  () : memref<64xf32>",
        "%1 = gpu.memcpy async [%0] %memref, %arg0 : memref<64xf32>, memref<64xf32>",
        "gpu.wait [%1]",
        "gpu.launch_func  @kernels::@scale blocks in (%c1, %c1, %c1) threads in (%c64, %c1, %c1)  "
        "args(%memref : memref<64xf32>, %arg1 : memref<64xf32>)",
        "gpu.launch blocks(%arg2, %arg3, %arg4) in (%arg8 = %c1, %arg9 = %c1, %arg10 = %c1) "
        "threads(%arg5, %arg6, %arg7) in (%arg11 = %c64, %arg12 = %c1, %arg13 = %c1) {",
        "gpu.dealloc  %memref : memref<64xf32>",
        "gpu.module @kernels {",
        "gpu.func @scale(%arg0: memref<64xf32>, %arg1: memref<64xf32>) kernel attributes "
        "{known_block_size = array<i32: 64, 1, 1>} {",
        "%thread_id_x = gpu.thread_id x",
        "gpu.barrier",
        "gpu.return",
        "gpu.terminator",
    ):
        assert line in text, line
    assert '"gpu.' not in text
    assert str(_parse(text)) == text


@pytest.mark.parametrize(
    ("op", "message"),
    [
        ("gpu.func @f(%a: index) workgroup(%w : memref<4xf32, 3>) kernel {\n  gpu.return\n}", "workgroup attributions are not supported"),
        ("gpu.func @f(%a: index) kernel {\n  %i = gpu.thread_id w\n  gpu.return\n}", "takes a dimension x, y or z, got 'w'"),
    ],
)
def test_unsupported_or_malformed_gpu_forms_are_located_errors(op, message):
    text = "module attributes {gpu.container_module} {\n  gpu.module @k {\n" + op + "\n  }\n}\n"
    with pytest.raises(IRParseError, match=message):
        _parse(text)
