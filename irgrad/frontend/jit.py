"""`ig.jit`: trace once per input signature, cache, and run on a backend.

The cache key is the signature: the pytree structure, each leaf's shape and dtype, and the
values of static arguments. A call with a new signature traces a new specialization. The
`cpu` backend (the default, as `jax.jit` compiles) lowers to LLVM and runs machine code,
`interp` runs the reference interpreter (slow, exact: the oracle the others are tested
against), `gpu` emits PTX and runs it through pycuda (a clear error where there is no CUDA
driver or device). `$IRGRAD_BACKEND` changes the default.
"""

from __future__ import annotations

import functools
import inspect
import os
import sys
import time
import weakref
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from irgrad.tracing.errors import DTypeError, UnsupportedError, user_site
from irgrad.tracing.pytree import tree_difference, tree_flatten, tree_leaf_names, tree_unflatten
from irgrad.frontend.compile_log import log_compile
from irgrad.frontend.stages import Compiled, Lowered
from irgrad.tracing.tracer import Program, ShapeDtype, Tracer, current_frame, function_name, trace

BACKENDS = ("interp", "cpu", "gpu")


def default_backend() -> str:
    """`$IRGRAD_BACKEND` if set (one of BACKENDS), else "cpu"."""
    return os.environ.get("IRGRAD_BACKEND", "").strip() or "cpu"


class Jitted:
    """A function compiled per input signature; call it like the original."""

    def __init__(
        self,
        fn: Callable[..., Any],
        backend: str,
        static_argnums: Sequence[int],
        fast_math: bool | str = False,
        static_argnames: Sequence[str] = (),
        report: str | None = None,
        report_passes: bool = False,
    ):
        if backend not in BACKENDS:
            raise ValueError(f"jit: unknown backend {backend!r}; choose one of {', '.join(BACKENDS)}")
        if fast_math not in (False, None) and backend != "cpu":
            raise ValueError(f"jit: fast_math applies to the cpu backend only, not {backend!r}")
        if fast_math not in (False, None, True):
            from irgrad.diagnostics import PassError
            from irgrad.transforms.set_fastmath import parse_flags

            try:
                parse_flags(str(fast_math))  # names a bad flag now
            except PassError as err:
                raise ValueError(f"jit: fast_math={fast_math!r}: {str(err).removeprefix('error: ')}") from None
        functools.update_wrapper(self, fn)
        self.fn = fn
        self.backend = backend
        self._signature = _signature_of(fn)
        self.static_argnums, self.static_kwnames = _static_positions(
            fn, self._signature, tuple(static_argnums), tuple(static_argnames)
        )
        # Calls with keyword-only (or **kwargs) arguments: one Jitted per set of keyword names
        # and static keyword values, taking the dynamic ones as a trailing positional list.
        self._keyword_variants: dict[Any, Jitted] = {}
        self.fast_math: bool | str = fast_math or False
        self.report = report  # a path: the first compile of each signature writes its HTML page there
        if report_passes and report is None:
            raise ValueError("jit: report_passes=True needs report=<path of the HTML page>")
        self.report_passes = report_passes  # the page shows the IR after each pass, not only each stage
        self._programs: dict[Any, Program] = {}
        self._compiled: dict[Any, Any] = {}
        self._trace_seconds: dict[Any, float] = {}
        self._last_key: Any = None
        # The call fast path (cpu backend): a cheap key of the arguments -> a call of the
        # Compiled that the full signature maps them to, taking the flat leaves. Filled only by
        # calls that went the general way.
        self._fast: dict[Any, Callable[[Sequence[Any]], Any]] = {}

    def _split(self, args: tuple[Any, ...]) -> tuple[list[Any], tuple[Any, ...]]:
        dynamic = [a for i, a in enumerate(args) if i not in self.static_argnums]
        static = tuple((i, args[i]) for i in self.static_argnums if i < len(args))
        for i, value in static:
            if not _hashable(value):
                raise TypeError(
                    f"jit: static argument #{i} of {function_name(self.fn)} must be hashable (it is "
                    f"part of the cache key), got {type(value).__name__}; pass a tuple instead of a "
                    f"list, or make it a traced argument{user_site()}"
                )
        return dynamic, static

    def signature(self, *args: Any) -> Any:
        dynamic, static = self._split(args)
        leaves, tree = tree_flatten(dynamic)
        try:
            return (tree, tuple(ShapeDtype.of_argument(x) for x in leaves), static)
        except DTypeError as err:
            names = [leaf for name, arg in zip(self._param_names(len(dynamic)), dynamic)
                     for leaf in tree_leaf_names(arg, name)]
            for name, leaf in zip(names, leaves):
                try:
                    ShapeDtype.of(leaf)
                except DTypeError:
                    raise DTypeError(f"jit: argument {name} of {function_name(self.fn)}: {err}{user_site()}") from None
            raise

    def trace(self, *args: Any) -> Program:
        """The traced program for these arguments' signature (cached)."""
        key = self.signature(*args)
        program = self._programs.get(key)
        if program is None:
            if os.environ.get("IRGRAD_EXPLAIN_CACHE_MISSES") == "1":
                dynamic, _ = self._split(args)
                why = self._explain(key, dynamic)
                print(f"irgrad.jit: compiling {function_name(self.fn)}: {why}", file=sys.stderr)
            self._last_key = key
            dynamic, static = self._split(args)
            static_values = dict(static)

            def staged(*dyn: Any) -> Any:
                it = iter(dyn)
                full_args = [static_values[i] if i in static_values else next(it) for i in range(len(args))]
                return self.fn(*full_args)

            staged.__name__ = function_name(self.fn)
            leaves, tree = tree_flatten(dynamic)
            avals = [ShapeDtype.of_argument(x) for x in leaves]
            start = time.perf_counter()
            program = trace(staged, *tree_unflatten(tree, avals))
            self._trace_seconds[key] = time.perf_counter() - start
            self._name_arguments(program, dynamic)
            self._programs[key] = program
        return program

    def _name_arguments(self, program: Program, dynamic: list[Any]) -> None:
        """SSA names from `fn`'s own parameter names (the traced wrapper takes `*dyn`); leaves
        of parameters without a name (`#k`) keep the tracer's."""
        leaf_names: list[str] = []
        for name, arg in zip(self._param_names(len(dynamic)), dynamic):
            leaf_names.extend(tree_leaf_names(arg, name))
        for arg, name in zip(program.traced.func_op.body.blocks[0].args, leaf_names):
            if name.replace("_", "a").isalnum():
                arg.name_hint = name

    def _param_names(self, count: int) -> list[str]:
        """The names of the dynamic parameters of `fn` (`#k` where unknown)."""
        try:
            params = [
                p.name
                for p in inspect.signature(self.fn).parameters.values()
                if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
            ]
        except (TypeError, ValueError):
            params = []
        names = [n for i, n in enumerate(params) if i not in self.static_argnums]
        return [names[k] if k < len(names) else f"#{k}" for k in range(count)]

    def _explain(self, key: Any, dynamic: list[Any]) -> str:
        """Why a call compiles: the first difference from the previous signature, naming the
        argument (`params_w`: leaf `w` of argument `params`)."""
        if self._last_key is None:
            return "first call"
        (tree, avals, static), (old_tree, old_avals, old_static) = key, self._last_key
        names = self._param_names(len(dynamic))
        if tree != old_tree:
            if len(tree.children) != len(old_tree.children):
                return f"{len(tree.children)} arguments (was {len(old_tree.children)})"
            for name, new, old in zip(names, tree.children, old_tree.children):
                found = tree_difference(new, old, name)
                if found is not None:
                    return f"new argument structure: {found.replace('expected', 'was')}"
        leaf_names = [leaf for name, arg in zip(names, dynamic) for leaf in tree_leaf_names(arg, name)]
        for k, (a, b) in enumerate(zip(avals, old_avals)):
            what = leaf_names[k] if k < len(leaf_names) else f"argument leaf #{k}"
            if a.shape != b.shape:
                return f"argument {what}: new shape {a.shape} (was {b.shape})"
            if a.dtype != b.dtype:
                return f"argument {what}: new dtype {a.dtype} (was {b.dtype})"
        for (i, value), (_, old_value) in zip(static, old_static):
            if value != old_value:
                return f"static argument #{i}: new value {value!r} (was {old_value!r})"
        return "new signature"

    def lower(self, *args: Any) -> Lowered:
        """The program for these arguments lowered through every CPU stage (see `Lowered`)."""
        program = self.trace(*args)
        return Lowered(program, self._trace_seconds.get(self.signature(*args), 0.0), self.fast_math)

    def _compile(self, key: Any, args: tuple[Any, ...]) -> Compiled:
        compiled = self._compiled.get(key)
        if compiled is not None:
            return compiled
        start, reason = time.perf_counter(), self._recompile_reason(key, args)
        program = self.trace(*args)
        # A page of every pass needs the passes run: the disk cache is not asked then.
        compiled = None if self.report_passes else _from_disk_cache(program, self.fast_math)
        lowered = None
        if compiled is None:
            keep = self.report is not None
            lowered = Lowered(
                program, self._trace_seconds.get(key, 0.0), self.fast_math, keep_stages=keep, keep_passes=self.report_passes
            )
            compiled = lowered.compile()
            _to_disk_cache(program, compiled, self.fast_math)
        self._compiled[key] = compiled
        if self.report is not None:
            self._write_report(program, lowered, compiled, reason)
        log_compile(function_name(self.fn), time.perf_counter() - start, reason)
        return compiled

    def _write_report(self, program: Program, lowered: Lowered | None, compiled: Any, reason: str | None) -> None:
        from irgrad.frontend.compile_report import jit_report, write_report

        why = f"; recompiled because {reason}" if reason else ""
        cache = ("miss: compiled" if lowered is not None else "hit: loaded from the disk cache") + why
        trace = {"trace": self._trace_seconds.get(self._last_key, 0.0)}
        stats = compiled.stats() if lowered is not None else trace
        write_report(self.report, jit_report(function_name(self.fn), lowered, stats, cache, str(program.module)))

    def _recompile_reason(self, key: Any, args: tuple[Any, ...]) -> str | None:
        """Why this function compiles again (None on its first compile): the argument whose
        shape, dtype or structure differs from the last signature traced."""
        if not self._compiled or self._last_key is None or self._last_key == key:
            return None
        return self._explain(key, self._split(args)[0])

    def _call_gpu(self, args: tuple[Any, ...]) -> Any:
        """Compiled to PTX once per signature; runs through pycuda (a clear error without a
        CUDA driver and device, or with IRGRAD_GPU_EMULATE=1 on the slow emulator)."""
        key = self.signature(*args)
        compiled = self._compiled.get(key)
        if compiled is None:
            start, reason = time.perf_counter(), self._recompile_reason(key, args)
            compiled = _gpu_compile(self.trace(*args))
            self._compiled[key] = compiled
            log_compile(function_name(self.fn), time.perf_counter() - start, reason)
        program = self._programs[key]
        dynamic, _ = self._split(args)
        leaves, _ = tree_flatten(dynamic)
        inputs = [np.asarray(x, dtype=a.dtype) for x, a in zip(leaves, program.in_avals)]
        return tree_unflatten(program.traced.out_tree, compiled.call_flat(inputs))

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if kwargs:
            return self._call_with_keywords(args, kwargs)
        fast = None
        if self.backend == "cpu" and current_frame() is None:
            # The fast path: arguments whose cheap key a previous call compiled for. Plain
            # array arguments (the common case) are keyed inline, as _fast_key would.
            if not self.static_argnums:
                for a in args:
                    if type(a) is not np.ndarray:
                        break
                else:
                    caller = self._fast.get(tuple([(a.shape, a.dtype) for a in args]))
                    if caller is not None:
                        return caller(args)
            fast = _fast_key(args, self.static_argnums)
            if fast is not None:
                try:
                    caller = self._fast.get(fast[0])
                except TypeError:  # an unhashable static value: the general path says so
                    caller = None
                if caller is not None:
                    return caller(fast[1])
        if current_frame() is not None or any(isinstance(x, Tracer) for x in tree_flatten(list(args))[0]):
            # Inside a trace, jit is transparent: the function is traced inline.
            return self.fn(*args)
        if self.backend == "gpu":
            return self._call_gpu(args)
        key = self.signature(*args)
        dynamic, _ = self._split(args)
        if self.backend == "cpu":
            compiled = self._compile(key, args)
            result = compiled(*dynamic)
            if fast is not None:
                arrays = all(type(leaf) is np.ndarray for leaf in fast[1])
                self._fast[fast[0]] = compiled.array_caller() if arrays else compiled.call_leaves
            return result
        program = self.trace(*args)
        leaves, _ = tree_flatten(dynamic)
        # Leaves go as they are: the program gives Python scalars their traced dtype (float32),
        # which np.asarray would have made float64.
        return program(*tree_unflatten(program.traced.in_tree, leaves))

    def _call_with_keywords(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """Keyword arguments as JAX takes them: those naming positional parameters are bound
        to their positions (defaults filled in), so static_argnums/static_argnames and the
        cache see one form of the call; keyword-only ones go to a variant per set of names
        and static values, which takes the dynamic ones as a trailing list."""
        if self._signature is None:
            raise TypeError(f"jit: {function_name(self.fn)} takes no keyword arguments here (its "
                            f"signature cannot be inspected); pass them positionally")
        try:
            bound = self._signature.bind(*args, **kwargs)
        except TypeError as err:
            raise TypeError(f"jit: {function_name(self.fn)}: {err}") from None
        bound.apply_defaults()
        args = bound.args
        # Keyword-only parameters left at their defaults stay out of the variant's key.
        rest = {k: v for k, v in bound.kwargs.items() if k in kwargs}
        if not rest:
            return self(*args)
        static = {k: v for k, v in rest.items() if k in self.static_kwnames}
        names = tuple(sorted(k for k in rest if k not in static))
        for name, value in static.items():
            if not _hashable(value):
                raise TypeError(f"jit: static argument {name!r} of {function_name(self.fn)} must be "
                                f"hashable, got {type(value).__name__}{user_site()}")
        key = (names, tuple(sorted(static.items())))
        variant = self._keyword_variants.get(key)
        if variant is None:
            fn = self.fn

            def with_keywords(*call_args: Any) -> Any:
                *positional, values = call_args
                return fn(*positional, **static, **dict(zip(names, values)))

            with_keywords.__name__ = function_name(fn)
            variant = Jitted(
                with_keywords, self.backend, self.static_argnums, self.fast_math, report=self.report,
                report_passes=self.report_passes,
            )
            self._keyword_variants[key] = variant
        return variant(*args, [rest[k] for k in names])


def _hashable(value: Any) -> bool:
    try:
        hash(value)
    except TypeError:
        return False
    return True


def _signature_of(fn: Callable[..., Any]) -> inspect.Signature | None:
    try:
        return inspect.signature(fn)
    except (TypeError, ValueError):
        return None


def _static_positions(
    fn: Callable[..., Any],
    signature: inspect.Signature | None,
    static_argnums: tuple[int, ...],
    static_argnames: tuple[str, ...],
) -> tuple[tuple[int, ...], frozenset[str]]:
    """static_argnames turned into positions where they name positional parameters (JAX
    relates the two the same way); the keyword-only names stay names."""
    if isinstance(static_argnames, str):
        static_argnames = (static_argnames,)
    static_argnums = _nonnegative(fn, signature, static_argnums)
    if not static_argnames:
        return static_argnums, frozenset()
    if signature is None:
        raise ValueError(f"jit: static_argnames needs {function_name(fn)}'s signature, which "
                         f"cannot be inspected; use static_argnums")
    params = list(signature.parameters.values())
    positional = [p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    keyword = {p.name for p in params if p.kind == p.KEYWORD_ONLY}
    takes_kwargs = any(p.kind == p.VAR_KEYWORD for p in params)
    nums, names = list(static_argnums), set()
    for name in static_argnames:
        if name in positional:
            nums.append(positional.index(name))
        elif name in keyword or takes_kwargs:
            names.add(name)
        else:
            raise ValueError(f"jit: static_argnames names {name!r}, which is not a parameter of "
                             f"{function_name(fn)}{tuple(signature.parameters)}")
    return tuple(sorted(set(nums))), frozenset(names)


def _nonnegative(fn: Callable[..., Any], signature: inspect.Signature | None, nums: tuple[int, ...]) -> tuple[int, ...]:
    """Negative static_argnums counted from the end of the positional parameters, as JAX."""
    if all(n >= 0 for n in nums):
        return nums
    params = [] if signature is None else list(signature.parameters.values())
    if signature is None or any(p.kind == p.VAR_POSITIONAL for p in params):
        raise ValueError(f"jit: a negative static_argnums needs {function_name(fn)}'s number of "
                         "positional parameters (a signature without *args)")
    count = sum(p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) for p in params)
    out = []
    for n in nums:
        if not -count <= n < count:
            raise ValueError(f"jit: static_argnums {n} is out of range for {function_name(fn)}, "
                             f"which takes {count} positional parameters")
        out.append(n % count)
    return tuple(sorted(set(out)))


_SCALARS = (bool, int, float, complex)


def _fast_key(args: tuple[Any, ...], static_argnums: tuple[int, ...]) -> tuple[Any, list[Any]] | None:
    """A cheap cache key of a call's arguments and their flat leaves, or None.

    The key determines `Jitted.signature` (pytree structure, each leaf's shape and dtype, the
    static values), so a key seen before maps to the same compiled function; the leaves come
    in `tree_flatten` order. Only plain tuples, lists, dicts and None over numpy arrays and
    Python scalars take this path: anything else (tracers, namedtuples, subclasses, other
    array types) returns None and goes the general way.
    """
    leaves: list[Any] = []
    append = leaves.append
    try:
        if static_argnums:
            n = len(args)
            dynamic = [a for i, a in enumerate(args) if i not in static_argnums]
            static = tuple((i, args[i]) for i in static_argnums if i < n)
            key: Any = (tuple([_fast_visit(a, append) for a in dynamic]), static)
        else:
            key = tuple([_fast_visit(a, append) for a in args])
    except Exception:  # _NotFast, or unsortable dict keys: the general path handles (or raises)
        return None
    return key, leaves


def _fast_visit(node: Any, append: Callable[[Any], None]) -> Any:
    """`node`'s part of the fast key (leaves appended in `tree_flatten` order)."""
    kind = type(node)
    if kind is np.ndarray:
        append(node)
        return (node.shape, node.dtype)
    if kind is list:
        return ("l", *[_fast_visit(c, append) for c in node])
    if kind is tuple:
        return ("t", *[_fast_visit(c, append) for c in node])
    if kind is dict:
        keys = tuple(sorted(node))
        return ("d", keys, *[_fast_visit(node[k], append) for k in keys])
    if node is None:
        return None
    if kind in _SCALARS:
        append(node)
        return (kind,)
    raise _NotFast


class _NotFast(Exception):
    pass


def _gpu_compile(program: Program) -> Any:
    """The program for the GPU, from the disk cache where it was compiled before (the same
    cache and key rules as the CPU's: irgrad/backends/cache.py), else compiled and stored."""
    from irgrad.backends import cache
    from irgrad.backends.gpu import DEFAULT_ARCH, compile_program
    from irgrad.backends.gpu.program import GpuCompiled
    from irgrad.pipelines import GPU_PIPELINE

    if cache.cache_dir() is None:
        return compile_program(program)
    key = cache.cache_key(program.cache_text(), GPU_PIPELINE, f"nvptx64:{DEFAULT_ARCH}")
    data = cache.load(key, ".gpu.json")
    if data is not None:
        try:
            return GpuCompiled.from_bytes(data)
        except Exception:  # a corrupt or foreign entry: recompile and overwrite it
            pass
    compiled = compile_program(program)
    cache.store(key, compiled.to_bytes(), ".gpu.json")
    return compiled


_DISK_KEYS: weakref.WeakKeyDictionary[Program, dict[Any, str]] = weakref.WeakKeyDictionary()


def _disk_key(program: Program, fast_math: bool | str = False) -> str:
    """The program's disk-cache key, hashed once per program and fast-math setting: a cold
    compile asks for it twice (the lookup that misses, the store), and printing the module to
    hash it is a few percent of a small program's compile."""
    keys = _DISK_KEYS.setdefault(program, {})
    key = keys.get(fast_math)
    if key is None:
        from irgrad.backends.cache import cache_key
        from irgrad.backends.cpu import host_target
        from irgrad.pipelines import cpu_steps

        target = host_target()
        pipeline = ",".join(spec for _, spec in cpu_steps(fast_math))
        key = keys[fast_math] = cache_key(program.cache_text(), pipeline, repr(target))
    return key


def _from_disk_cache(program: Program, fast_math: bool | str = False) -> Compiled | None:
    from irgrad.backends import cache
    from irgrad.backends.cpu import CompileError, load_object

    if cache.cache_dir() is None:
        return None
    data = cache.load(_disk_key(program, fast_math))
    if data is None:
        return None
    try:
        module = load_object(data)
        return Compiled(program, module, {"load": module.stats.load})
    except (CompileError, KeyError, ValueError):
        return None  # a corrupt or foreign entry: recompile and overwrite it


def _to_disk_cache(program: Program, compiled: Compiled, fast_math: bool | str = False) -> None:
    from irgrad.backends import cache

    if cache.cache_dir() is not None:
        cache.store(_disk_key(program, fast_math), compiled.object_code())


def jit(
    fn: Callable[..., Any] | None = None,
    *,
    backend: str | None = None,
    static_argnums: int | Sequence[int] = (),
    static_argnames: str | Sequence[str] = (),
    fast_math: bool | str = False,
    report: str | None = None,
    report_passes: bool = False,
) -> Any:
    """Compile `fn` per input signature; usable as `@ig.jit` or `ig.jit(fn, backend=...)`.

    `backend`: "cpu" (default; `$IRGRAD_BACKEND` overrides), "interp" or "gpu".
    `fast_math` (cpu): off by default (IEEE-exact: sums in the order the loops say, NaN and
    Inf as numpy). `True` gives LLVM every fast-math flag (`fast`: it may assume no NaN and no
    Inf); a string names the flags, e.g. "reassoc,contract", which lets LLVM vectorize sums
    (as several partial sums, so the last bits change) and fuse multiply-adds while keeping
    NaN/Inf semantics. See the `set-fastmath` pass.
    `static_argnums` / `static_argnames`: arguments that are Python values baked into the
    program (one compile per value; they must be hashable), by position or by parameter name.
    Keyword arguments are accepted as JAX does.
    `report`: a path; the first compile of each signature writes there one self-contained HTML
    page (irgrad/frontend/compile_report.py): the IR after each stage with diffs, times, op
    counts, graph pictures and the cache outcome; `report_passes=True` shows the IR after each
    pass of each stage instead (the passes then run even when the disk cache holds the program).
    """
    if fn is not None and not callable(fn):
        raise TypeError(f"jit: expected a function, got {type(fn).__name__} {fn!r:.60}")
    backend = backend or default_backend()
    nums = (static_argnums,) if isinstance(static_argnums, int) else tuple(static_argnums)
    names = (static_argnames,) if isinstance(static_argnames, str) else tuple(static_argnames)
    if fn is None:
        return lambda f: Jitted(f, backend, nums, fast_math, names, report, report_passes)
    return Jitted(fn, backend, nums, fast_math, names, report, report_passes)
