"""MLIR's custom assembly of the `gpu` ops irgrad makes: `gpu.module`, `gpu.func`, `gpu.launch`,
`gpu.launch_func`, `gpu.alloc`/`dealloc`/`memcpy`/`wait`, `gpu.thread_id`/`block_id`/`block_dim`/
`grid_dim`, `gpu.return`, `gpu.terminator`, `gpu.barrier`.

xDSL 0.75 prints them generically, and its generic form is not upstream's: a kernel has a
`kernel` property where MLIR has the `gpu.kernel` attribute, and MLIR 19's `gpu.module` wants an
explicit `gpu.module_end` in generic form (MLIR 20 dropped it), so upstream `mlir-opt` rejected
irgrad's stages "kernels" and "nvvm". The custom forms, which every MLIR release reads, are
printed and read here as MLIR 19 writes them (`GPUDialect.cpp`):

    gpu.module @kernels {
      gpu.func @k(%arg0: memref<4xf32>) kernel attributes {gpu.known_block_size = ...} { ... }
    }
    %m = gpu.alloc  () : memref<32x16xf32>
    gpu.launch_func  @kernels::@k blocks in (%c2, %c1, %c1) threads in (%c256, %c1, %c1)  args(%m : memref<32x16xf32>)
    gpu.launch blocks(%bx, %by, %bz) in (%gx = %c2, ...) threads(%tx, %ty, %tz) in (...) { ... }

Async tokens print and read as MLIR's `async [%deps]`. Clusters of `gpu.launch`, workgroup and
private attributions, `gpu.alloc`'s symbol operands and launch_func's async object, which irgrad
never makes, are parse errors naming them. Upstream: not reported.
"""

from __future__ import annotations

from typing import Any

from xdsl.dialects import gpu
from xdsl.dialects.builtin import IndexType, StringAttr, SymbolRefAttr, UnitAttr, i32
from xdsl.ir import Block
from xdsl.parser import Parser
from xdsl.printer import Printer

from irgrad.xdsl_patches.patching import is_patched
from irgrad.xdsl_patches.upstream_op_syntax import (
    declare_format,
    install_custom_syntax,
    parse_arrow_types,
    print_arrow_types,
    print_values,
)

_INHERENT_BLOCK_SIZES = {"known_block_size": "gpu.known_block_size", "known_grid_size": "gpu.known_grid_size"}
"""MLIR 19 names these without the prefix (inherent attributes); xDSL with it."""


def apply() -> None:
    if is_patched(gpu.FuncOp.print):
        return
    install_custom_syntax(gpu.ModuleOp, _print_module, _parse_module)
    install_custom_syntax(gpu.FuncOp, _print_func, _parse_func)
    _apply_launch_ops()


def _print_module(self: gpu.ModuleOp, printer: Printer) -> None:
    printer.print_string(" ")
    printer.print_symbol_name(self.sym_name.data)
    printer.print_op_attributes(self.attributes, print_keyword=True)
    printer.print_string(" ")
    printer.print_region(self.body, print_entry_block_args=False, print_empty_block=False)


def _parse_module(cls: Any, parser: Parser) -> gpu.ModuleOp:
    name = parser.parse_symbol_name()
    attrs = parser.parse_optional_attr_dict_with_keyword()
    body = parser.parse_region()
    if not body.blocks:
        body.add_block(Block())
    module = gpu.ModuleOp(StringAttr(name.data), body)  # type: ignore[arg-type]
    if attrs is not None:
        module.attributes |= attrs.data
    return module


def _print_func(self: gpu.FuncOp, printer: Printer) -> None:
    printer.print_string(" ")
    printer.print_symbol_name(self.sym_name.data)
    printer.print_string("(")
    printer.print_list(self.body.block.args, printer.print_block_argument)
    printer.print_string(")")
    print_arrow_types(printer, list(self.function_type.outputs.data))
    if self.kernel is not None:
        printer.print_string(" kernel")
    upstream_names = {xdsl_name: name for name, xdsl_name in _INHERENT_BLOCK_SIZES.items()}
    extra = {upstream_names.get(k, k): v for k, v in self.attributes.items() if k != "sym_name"}
    printer.print_op_attributes(extra, print_keyword=True)
    printer.print_string(" ")
    printer.print_region(self.body, print_entry_block_args=False)


def _parse_func(cls: Any, parser: Parser) -> gpu.FuncOp:
    name = parser.parse_symbol_name()
    args = parser.parse_comma_separated_list(Parser.Delimiter.PAREN, parser.parse_argument)
    outputs = parse_arrow_types(parser)
    for keyword in ("workgroup", "private"):
        if parser.parse_optional_keyword(keyword):
            parser.raise_error(f"gpu.func {keyword} attributions are not supported by irgrad")
    kernel = parser.parse_optional_keyword("kernel") is not None
    attrs = parser.parse_optional_attr_dict_with_keyword()
    body = parser.parse_region(args)
    inputs = [a.type for a in args]
    op = gpu.FuncOp(name.data, (inputs, outputs), body, kernel=kernel or None)
    if attrs is not None:
        for key, value in attrs.data.items():
            if key == "gpu.kernel" and isinstance(value, UnitAttr):
                op.properties["kernel"] = UnitAttr()
                continue
            op.attributes[_INHERENT_BLOCK_SIZES.get(key, key)] = value
    return op


# ---- the host and launch ops ---------------------------------------------------------------

_SEGMENTS = ("operandSegmentSizes",)
"""Kept as an attribute by some of xDSL's gpu ops, implied by the custom form."""

_DIMENSION_OPS = ("ThreadIdOp", "BlockIdOp", "BlockDimOp", "GridDimOp")


def _apply_launch_ops() -> None:
    declare_format(gpu.ReturnOp, "attr-dict ($args^ `:` type($args))?")
    declare_format(gpu.TerminatorOp, "attr-dict")
    declare_format(gpu.BarrierOp, "attr-dict")
    for name in _DIMENSION_OPS:
        op_type = getattr(gpu, name, None)
        if op_type is not None:
            install_custom_syntax(op_type, _print_dimension, _parse_dimension)
    install_custom_syntax(gpu.AllocOp, _print_alloc, _parse_alloc)
    install_custom_syntax(gpu.DeallocOp, _print_dealloc, _parse_dealloc)
    install_custom_syntax(gpu.MemcpyOp, _print_memcpy, _parse_memcpy)
    install_custom_syntax(gpu.WaitOp, _print_wait, _parse_wait)
    install_custom_syntax(gpu.LaunchFuncOp, _print_launch_func, _parse_launch_func)
    install_custom_syntax(gpu.LaunchOp, _print_launch, _parse_launch)


def _print_async(printer: Printer, op: Any) -> bool:
    """gpu.launch's form of it: ` async` when the op returns a token, ` [%deps]`; whether it
    printed anything."""
    printed = getattr(op, "asyncToken", None) is not None
    if printed:
        printer.print_string(" async")
    if op.asyncDependencies:
        printer.print_string(" [")
        printer.print_list(op.asyncDependencies, printer.print_ssa_value)
        printer.print_string("]")
        printed = True
    return printed


def _print_async_directive(printer: Printer, op: Any) -> None:
    """MLIR's ` custom<AsyncDependencies>(...) ` between spaces, as the declarative formats of
    alloc, dealloc, memcpy, wait and launch_func have it (two spaces when there is none)."""
    if not _print_async(printer, op):
        printer.print_string(" ")


def _parse_async(parser: Parser) -> tuple[bool, list[Any]]:
    is_async = parser.parse_optional_keyword("async") is not None
    pos = parser.pos
    deps = parser.parse_optional_comma_separated_list(Parser.Delimiter.SQUARE, parser.parse_unresolved_operand) or []
    token = gpu.AsyncTokenType()
    return is_async, parser.resolve_operands(deps, [token] * len(deps), pos)


def _print_dimension(self: Any, printer: Printer) -> None:
    printer.print_string(f" {self.dimension.data.value}")
    printer.print_op_attributes(self.attributes, reserved_attr_names=_SEGMENTS)


def _parse_dimension(cls: Any, parser: Parser) -> Any:
    pos = parser.pos
    name = parser.parse_identifier()
    if name not in ("x", "y", "z"):
        parser.raise_error(f"{cls.name} takes a dimension x, y or z, got '{name}'", at_position=pos)
    if parser.parse_optional_keyword("upper_bound") is not None:
        parser.raise_error(f"{cls.name} with an upper_bound is not supported by irgrad")
    op = cls(gpu.DimensionAttr(gpu.DimensionEnum(name)))
    op.attributes |= parser.parse_optional_attr_dict()
    return op


def _print_alloc(self: gpu.AllocOp, printer: Printer) -> None:
    _print_async_directive(printer, self)
    printer.print_string(" ")
    if self.hostShared is not None:
        printer.print_string("host_shared ")
    printer.print_string("(")
    printer.print_list(self.dynamicSizes, printer.print_ssa_value)
    printer.print_string(")")
    if self.symbolOperands:
        printer.print_string("[")
        printer.print_list(self.symbolOperands, printer.print_ssa_value)
        printer.print_string("]")
    printer.print_op_attributes(self.attributes, reserved_attr_names=_SEGMENTS)
    printer.print_string(" : ")
    printer.print_attribute(self.result.type)


def _parse_alloc(cls: Any, parser: Parser) -> gpu.AllocOp:
    is_async, deps = _parse_async(parser)
    host_shared = parser.parse_optional_keyword("host_shared") is not None
    sizes = parser.parse_comma_separated_list(Parser.Delimiter.PAREN, parser.parse_unresolved_operand)
    if parser.parse_optional_punctuation("[") is not None:
        parser.raise_error("gpu.alloc with symbol operands (an affine layout) is not supported by irgrad")
    attrs = parser.parse_optional_attr_dict()
    parser.parse_punctuation(":")
    result_type = parser.parse_type()
    index = IndexType()
    op = gpu.AllocOp(
        result_type,  # type: ignore[arg-type]
        [parser.resolve_operand(v, index) for v in sizes],
        host_shared=host_shared,
        async_dependencies=deps,
        is_async=is_async,
    )
    op.attributes |= attrs
    return op


def _print_dealloc(self: gpu.DeallocOp, printer: Printer) -> None:
    _print_async_directive(printer, self)
    printer.print_string(" ")
    printer.print_ssa_value(self.buffer)
    printer.print_op_attributes(self.attributes, reserved_attr_names=_SEGMENTS)
    printer.print_string(" : ")
    printer.print_attribute(self.buffer.type)


def _parse_dealloc(cls: Any, parser: Parser) -> gpu.DeallocOp:
    is_async, deps = _parse_async(parser)
    buffer = parser.parse_unresolved_operand()
    attrs = parser.parse_optional_attr_dict()
    parser.parse_punctuation(":")
    op = gpu.DeallocOp(parser.resolve_operand(buffer, parser.parse_type()), deps, is_async)
    op.attributes |= attrs
    return op


def _print_memcpy(self: gpu.MemcpyOp, printer: Printer) -> None:
    _print_async_directive(printer, self)
    printer.print_string(" ")
    printer.print_list((self.dst, self.src), printer.print_ssa_value)
    printer.print_op_attributes(self.attributes, reserved_attr_names=_SEGMENTS)
    printer.print_string(" : ")
    printer.print_list((self.dst.type, self.src.type), printer.print_attribute)


def _parse_memcpy(cls: Any, parser: Parser) -> gpu.MemcpyOp:
    is_async, deps = _parse_async(parser)
    pos = parser.pos
    operands = parser.parse_comma_separated_list(Parser.Delimiter.NONE, parser.parse_unresolved_operand)
    attrs = parser.parse_optional_attr_dict()
    parser.parse_punctuation(":")
    types = parser.parse_comma_separated_list(Parser.Delimiter.NONE, parser.parse_type)
    if len(operands) != 2 or len(types) != 2:
        parser.raise_error("gpu.memcpy takes a destination and a source, with their two types", at_position=pos)
    dst, src = parser.resolve_operands(operands, types, pos)
    op = gpu.MemcpyOp(src, dst, deps, is_async)
    op.attributes |= attrs
    return op


def _print_wait(self: gpu.WaitOp, printer: Printer) -> None:
    _print_async_directive(printer, self)
    printer.print_op_attributes(self.attributes)


def _parse_wait(cls: Any, parser: Parser) -> gpu.WaitOp:
    is_async, deps = _parse_async(parser)
    op = gpu.WaitOp.create(operands=deps, result_types=[gpu.AsyncTokenType()] if is_async else [])
    op.attributes |= parser.parse_optional_attr_dict()
    return op


def _print_launch_func(self: gpu.LaunchFuncOp, printer: Printer) -> None:
    _print_async_directive(printer, self)
    if self.asyncObject is not None:
        printer.print_string(" <")
        printer.print_ssa_value(self.asyncObject)
        printer.print_string(" : ")
        printer.print_attribute(self.asyncObject.type)
        printer.print_string(">")
    printer.print_string(" ")
    printer.print_attribute(self.kernel)
    printer.print_string(" blocks in ")
    print_values(printer, (self.gridSizeX, self.gridSizeY, self.gridSizeZ))
    printer.print_string(" threads in ")
    print_values(printer, (self.blockSizeX, self.blockSizeY, self.blockSizeZ))
    if not isinstance(self.gridSizeX.type, IndexType):
        printer.print_string(" : ")
        printer.print_attribute(self.gridSizeX.type)
    if self.clusterSizeX is not None:
        printer.print_string(" clusters in ")
        print_values(printer, (self.clusterSizeX, self.clusterSizeY, self.clusterSizeZ))
    if self.dynamicSharedMemorySize is not None:
        printer.print_string(" dynamic_shared_memory_size ")
        printer.print_ssa_value(self.dynamicSharedMemorySize)
    if self.kernelOperands:
        printer.print_string("  args(")  # upstream: a space for each optional directive before
        printer.print_list(
            self.kernelOperands,
            lambda v: (printer.print_ssa_value(v), printer.print_string(" : "), printer.print_attribute(v.type)),
        )
        printer.print_string(")")
    printer.print_op_attributes(self.attributes, reserved_attr_names=_SEGMENTS)


def _parse_launch_func(cls: Any, parser: Parser) -> gpu.LaunchFuncOp:
    is_async, deps = _parse_async(parser)
    if parser.parse_optional_punctuation("<") is not None:
        parser.raise_error("gpu.launch_func with an async object is not supported by irgrad")
    kernel = parser.parse_attribute()
    if not isinstance(kernel, SymbolRefAttr):
        parser.raise_error(f"gpu.launch_func names its kernel @module::@function, got {kernel}")
    paren = Parser.Delimiter.PAREN
    parser.parse_keyword("blocks")
    parser.parse_keyword("in")
    grid = parser.parse_comma_separated_list(paren, parser.parse_unresolved_operand)
    parser.parse_keyword("threads")
    parser.parse_keyword("in")
    block = parser.parse_comma_separated_list(paren, parser.parse_unresolved_operand)
    if len(grid) != 3 or len(block) != 3:
        parser.raise_error("gpu.launch_func takes 3 grid sizes and 3 block sizes")
    size_type = parser.parse_type() if parser.parse_optional_punctuation(":") is not None else IndexType()
    clusters = None
    if parser.parse_optional_keyword("clusters") is not None:
        parser.parse_keyword("in")
        clusters = [parser.resolve_operand(v, size_type) for v in parser.parse_comma_separated_list(paren, parser.parse_unresolved_operand)]
    shared = None
    if parser.parse_optional_keyword("dynamic_shared_memory_size") is not None:
        shared = parser.resolve_operand(parser.parse_unresolved_operand(), i32)
    arguments = []
    if parser.parse_optional_keyword("args") is not None:

        def argument() -> Any:
            value = parser.parse_unresolved_operand()
            parser.parse_punctuation(":")
            return parser.resolve_operand(value, parser.parse_type())

        arguments = parser.parse_comma_separated_list(paren, argument)
    attrs = parser.parse_optional_attr_dict()
    op = gpu.LaunchFuncOp(
        kernel,
        [parser.resolve_operand(v, size_type) for v in grid],
        [parser.resolve_operand(v, size_type) for v in block],
        clusterSize=clusters,
        kernelOperands=arguments,
        async_launch=is_async,
        asyncDependencies=deps,
        dynamicSharedMemorySize=shared,
    )
    op.attributes |= attrs
    return op


def _print_launch(self: gpu.LaunchOp, printer: Printer) -> None:
    """Without clusters: xDSL's launch body has the 12 arguments of a launch without them."""
    _print_async(printer, self)
    args = self.body.block.args

    def ids_and_sizes(ids: Any, sizes: Any, operands: Any) -> None:
        print_values(printer, ids)
        printer.print_string(" in (")
        printer.print_list(
            zip(sizes, operands),
            lambda pair: (printer.print_ssa_value(pair[0]), printer.print_string(" = "), printer.print_ssa_value(pair[1])),
        )
        printer.print_string(")")

    printer.print_string(" blocks")
    ids_and_sizes(args[0:3], args[6:9], (self.gridSizeX, self.gridSizeY, self.gridSizeZ))
    printer.print_string(" threads")
    ids_and_sizes(args[3:6], args[9:12], (self.blockSizeX, self.blockSizeY, self.blockSizeZ))
    if self.dynamicSharedMemorySize is not None:
        printer.print_string(" dynamic_shared_memory_size ")
        printer.print_ssa_value(self.dynamicSharedMemorySize)
    printer.print_string(" ")
    printer.print_region(self.body, print_entry_block_args=False)
    printer.print_op_attributes(self.attributes, reserved_attr_names=_SEGMENTS)


def _parse_launch(cls: Any, parser: Parser) -> gpu.LaunchOp:
    is_async, deps = _parse_async(parser)
    paren = Parser.Delimiter.PAREN
    index = IndexType()

    def ids_and_sizes(keyword: str) -> tuple[list[Any], list[Any], list[Any]]:
        parser.parse_keyword(keyword)
        ids = parser.parse_comma_separated_list(paren, lambda: parser.parse_argument(expect_type=False))
        parser.parse_keyword("in")

        def assignment() -> tuple[Any, Any]:
            size = parser.parse_argument(expect_type=False)
            parser.parse_punctuation("=")
            return size, parser.resolve_operand(parser.parse_unresolved_operand(), index)

        pairs = parser.parse_comma_separated_list(paren, assignment)
        if len(ids) != 3 or len(pairs) != 3:
            parser.raise_error(f"gpu.launch {keyword}(...) in (...) takes 3 ids and 3 sizes")
        return ids, [p[0] for p in pairs], [p[1] for p in pairs]

    block_ids, grid_args, grid = ids_and_sizes("blocks")
    if parser.parse_optional_keyword("clusters") is not None:
        parser.raise_error("gpu.launch with clusters is not supported by irgrad")
    thread_ids, block_args, block = ids_and_sizes("threads")
    shared = None
    if parser.parse_optional_keyword("dynamic_shared_memory_size") is not None:
        shared = parser.resolve_operand(parser.parse_unresolved_operand(), i32)
    entry = [a.resolve(index) for a in (*block_ids, *thread_ids, *grid_args, *block_args)]
    body = parser.parse_region(entry)
    attrs = parser.parse_optional_attr_dict()
    op = gpu.LaunchOp(body, grid, block, async_launch=is_async, asyncDependencies=deps, dynamicSharedMemorySize=shared)
    op.attributes |= attrs
    return op
