"""Run a per-device (SPMD) program on a simulated device grid: one interpreter per device.

`shard-partition` turns a global program into the program every device runs on its own chunks,
communicating through `shard` collectives. To test that program without a cluster, each device
gets its own instance of the reference interpreter in its own thread, and the collectives meet
in a `GridCommunicator`: every device deposits its array and waits on a `threading.Barrier`;
the barrier's action (run once, by the last device to arrive) computes the whole grid's results
with irgrad/backends/interpreter/collectives.py, the one definition of what a collective does;
then each device takes its own result. The devices run the same code as a single-device run.

No run can hang: a device that fails aborts the barrier (the others stop at their next
collective and the first failure is raised, naming the device), a device that returns while
others wait at a collective is a divergence (reported at once), and every wait has a timeout.

`run_partitioned` is the global view: it splits global inputs by the entry function's
`shard.arg_split_axes`, runs the grid, checks that replicated results agree and reassembles split
results by `shard.result_split_axes`.
"""

from __future__ import annotations

import math
import threading
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from xdsl.dialects.builtin import ArrayAttr, ModuleOp, SymbolRefAttr, TensorType
from xdsl.dialects.func import FuncOp
from xdsl.interpreter import Interpreter
from xdsl.ir import Operation

from irgrad.backends.interpreter import collectives
from irgrad.ir_numpy import numpy_dtype
from irgrad.backends.interpreter.errors import InterpreterError, InterpreterInputError
from irgrad.backends.interpreter.runner import (
    Value,
    check_arguments,
    check_supported,
    expand_autodiff,
    lookup_function,
    make_interpreter,
)
from irgrad.backends.interpreter.mpi import MpiFunctions
from irgrad.backends.interpreter.shard import Collective, Device, ShardFunctions
from irgrad.diagnostics import IrgradError
from irgrad.dialects import shard

BARRIER_TIMEOUT_S = 120.0
"""How long a device waits at a collective for the others before the run is declared stuck."""


@dataclass
class DeviceStats:
    """One device's communication: how many of each collective, and bytes sent (ring accounting,
    `collectives.bytes_sent`)."""

    collectives: Counter[str] = field(default_factory=Counter)
    bytes_sent: int = 0


@dataclass
class SpmdResult:
    grid_shape: tuple[int, ...]
    results: list[tuple[Value, ...]]
    """`results[i]`: device i's results (devices numbered row-major over the grid)."""
    stats: list[DeviceStats]

    @property
    def total_bytes_sent(self) -> int:
        return sum(s.bytes_sent for s in self.stats)


class DeviceAborted(InterpreterError):
    """Raised on a device waiting at a collective when another device failed: never reported
    itself (the other device's error is)."""


class GridCommunicator:
    """Where the devices of one run meet; see the module docstring.

    One barrier round per collective suffices: the action computes every result before any
    device is released, and the next action cannot run before every device (having taken its
    result) arrives again.
    """

    def __init__(self, grid: tuple[int, ...], timeout: float = BARRIER_TIMEOUT_S) -> None:
        self.grid = grid
        self.size = math.prod(grid)
        self.stats = [DeviceStats() for _ in range(self.size)]
        self._requests: list[tuple[Collective, np.ndarray, Operation] | None] = [None] * self.size
        self._results: list[np.ndarray] = []
        self._error: str | None = None
        self._lock = threading.Lock()
        self._arrived = 0
        self._finished: list[int] = []
        self._abort_reason: str | None = None
        self._barrier = threading.Barrier(self.size, action=self._combine, timeout=timeout)
        self.timeout = timeout

    def coords(self, device: int) -> tuple[int, ...]:
        return collectives.device_coords(self.grid)[device]

    # -- what a device calls ------------------------------------------------------------------

    def exchange(self, device: int, request: Collective, value: np.ndarray, op: Operation) -> np.ndarray:
        with self._lock:
            if self._finished:
                raise InterpreterError(self._divergence(self._finished), op)
            self._arrived += 1
        stats = self.stats[device]
        stats.collectives[request.kind] += 1
        group = shard.group_size(self.grid, request.grid_axes)
        stats.bytes_sent += collectives.bytes_sent(request.kind, value.nbytes, group)
        self._requests[device] = (request, value, op)
        try:
            self._barrier.wait()
        except threading.BrokenBarrierError:
            reason = self._abort_reason
            if reason is None:
                raise InterpreterError(
                    f"this device waited {self.timeout:g} s at this collective "
                    "for the other devices: they never reached it (their control flow diverged, "
                    "or they are stuck)",
                    op,
                ) from None
            if reason == "failure":
                raise DeviceAborted("another device failed", op) from None
            raise InterpreterError(reason, op) from None
        if self._error is not None:
            raise InterpreterError(self._error, op)
        return self._results[device]

    def finish(self, device: int) -> None:
        """`device` returned: a collective others wait at can never complete."""
        with self._lock:
            self._finished.append(device)
            if self._arrived and self._abort_reason is None:
                self._abort_reason = self._divergence(self._finished)
                self._barrier.abort()

    @property
    def aborted(self) -> bool:
        return self._abort_reason is not None

    def abort(self) -> None:
        """A device failed: release everyone waiting, now and at their next collective."""
        with self._lock:
            if self._abort_reason is None:
                self._abort_reason = "failure"
        self._barrier.abort()

    # -- the barrier's action -----------------------------------------------------------------

    def _divergence(self, finished: Sequence[int]) -> str:
        done = ", ".join(str(self.coords(d)) for d in finished)
        return (
            f"this device reached this collective, but device(s) {done} returned without reaching it: "
            "the devices' control flow diverged"
        )

    def _combine(self) -> None:
        # An exception here would break the barrier with no reason given: report it instead.
        self._arrived = 0
        self._error = None
        what = "the collective"
        try:
            requests = [r for r in self._requests if r is not None]
            first = requests[0][0]
            what = first.describe()
            for device, (request, _, _) in enumerate(requests):
                if request != first:
                    self._error = (
                        f"the devices disagree on the collective: device {self.coords(0)} runs "
                        f"{first.describe()}, device {self.coords(device)} runs {request.describe()} "
                        "(their control flow diverged)"
                    )
                    return
            self._results = first.run([value for _, value, _ in requests], self.grid)
        except Exception as err:  # a reduction collectives.py does not know, mismatched shapes
            self._error = f"cannot run {what} on the grid: {type(err).__name__}: {err}"


class _Cancellation(Interpreter.Listener):
    """Stops a device at its next op once the run has failed, so a device stuck in a loop (the
    one the others timed out waiting for) does not outlive the run."""

    def __init__(self, communicator: Any) -> None:
        self.communicator = communicator

    def will_interpret_op(self, op: Operation, args: tuple[Any, ...]) -> None:
        if self.communicator.aborted:
            raise DeviceAborted("the run was aborted", op)


# ---------------------------------------------------------------------------------------------
# run_spmd
# ---------------------------------------------------------------------------------------------


def _check_grid_shape(grid_shape: Sequence[int]) -> tuple[int, ...]:
    grid = tuple(grid_shape)
    if not grid or not all(isinstance(n, int | np.integer) and n >= 1 for n in grid):
        raise InterpreterInputError(f"grid shape {grid}: expected one or more positive sizes")
    return tuple(int(n) for n in grid)


def _on_device(err: BaseException, coords: tuple[int, ...], grid: tuple[int, ...]) -> BaseException:
    """`err`, saying which device raised it (in the message of irgrad's errors, which the
    drivers print without notes)."""
    where = f"on device {coords} of grid {'x'.join(map(str, grid))}"
    if hasattr(err, "__notes__"):  # xDSL attaches the whole module as notes
        del err.__notes__
    if isinstance(err, IrgradError | InterpreterInputError):  # the compiled code's checks too
        err.message = f"{err.message} ({where})"
        err.args = (err.message,)
    else:
        err.add_note(f"raised {where}")
    return err


def run_spmd(
    module: ModuleOp,
    entry: str,
    per_device_args: Sequence[Sequence[Value]],
    grid_shape: Sequence[int],
    *,
    timeout: float = BARRIER_TIMEOUT_S,
) -> SpmdResult:
    """Run `@entry` on every device of a grid of `grid_shape`, device i on `per_device_args[i]`.

    Each device has its own interpreter and thread; collectives meet in a GridCommunicator.
    The first error any device raises is re-raised, naming the device; a device waits at most
    `timeout` seconds at a collective.
    """
    grid = _check_grid_shape(grid_shape)
    size = math.prod(grid)
    if len(per_device_args) != size:
        raise InterpreterInputError(
            f"{len(per_device_args)} argument lists for a grid of shape {grid} ({size} devices)"
        )
    module = expand_autodiff(module)
    func = lookup_function(module, entry)
    inputs = []
    for device, args in enumerate(per_device_args):
        try:
            with np.errstate(all="ignore"):
                inputs.append(check_arguments(func, args))
        except InterpreterInputError as err:
            raise _on_device(err, collectives.device_coords(grid)[device], grid) from None
    check_supported(module, func)

    communicator = GridCommunicator(grid, timeout)

    def device_main(index: int) -> tuple[Value, ...]:
        interpreter = make_interpreter(module, [_Cancellation(communicator)])
        device = Device(index, grid, communicator)
        interpreter.register_implementations(ShardFunctions(device), override=True)
        interpreter.register_implementations(MpiFunctions(device), override=True)
        with np.errstate(all="ignore"):  # numpy's error state is per thread
            values = interpreter.call_op(func, inputs[index])
        # results the caller owns, as run_function returns them
        return tuple(np.array(v, order="C") if isinstance(v, np.ndarray) else v for v in values)

    return SpmdResult(grid, run_devices(communicator, device_main), communicator.stats)


def run_device(
    module: ModuleOp, entry: str, index: int, grid_shape: Sequence[int], args: Sequence[Value], communicator: Any
) -> tuple[Value, ...]:
    """Device `index` alone on the interpreter, its collectives meeting in `communicator` (when
    this process is that device of a multi-process job: irgrad/backends/mpi)."""
    grid = _check_grid_shape(grid_shape)
    module = expand_autodiff(module)
    func = lookup_function(module, entry)
    with np.errstate(all="ignore"):
        inputs = check_arguments(func, args)
    check_supported(module, func)
    interpreter = make_interpreter(module, [_Cancellation(communicator)])
    device = Device(index, grid, communicator)
    interpreter.register_implementations(ShardFunctions(device), override=True)
    interpreter.register_implementations(MpiFunctions(device), override=True)
    with np.errstate(all="ignore"):
        values = interpreter.call_op(func, inputs)
    return tuple(np.array(v, order="C") if isinstance(v, np.ndarray) else v for v in values)


def run_devices(communicator: GridCommunicator, device_main: Any) -> list[tuple[Value, ...]]:
    """`device_main(i)` for every device i of the communicator's grid, each in its own thread;
    their results in device order. The first failure (not a device stopped because another
    failed) is raised, naming its device; a failing device aborts the others' collectives."""
    grid = communicator.grid
    results: list[tuple[Value, ...] | None] = [None] * communicator.size
    failures: list[BaseException] = []
    lock = threading.Lock()

    def run(index: int) -> None:
        try:
            results[index] = device_main(index)
            communicator.finish(index)
        except BaseException as err:  # noqa: BLE001  (re-raised by the main thread)
            with lock:
                if not isinstance(err, DeviceAborted):
                    failures.append(_on_device(err, collectives.device_coords(grid)[index], grid))
            communicator.abort()

    threads = [
        threading.Thread(target=run, args=(i,), name=f"irgrad-device-{i}", daemon=True)
        for i in range(communicator.size)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if failures:
        raise failures[0]
    assert all(r is not None for r in results)
    return results  # type: ignore[return-value]


# ---------------------------------------------------------------------------------------------
# run_partitioned: global inputs and results
# ---------------------------------------------------------------------------------------------


def split_axes(func: FuncOp, key: str, types: Sequence[Any], grid: tuple[int, ...]) -> list[tuple[tuple[int, ...], ...]]:
    """The split axes of each argument or result, checked against its type and the grid."""
    attr = func.attributes.get(key)
    name = func.sym_name.data
    if not isinstance(attr, ArrayAttr) or len(attr.data) != len(types):
        raise InterpreterError(f"@{name} needs a {key} attribute: an array of {len(types)} #shard.axisarray")
    out = []
    for entry, t in zip(attr.data, types):
        if not isinstance(entry, shard.ShardAxesArrayAttr):
            raise InterpreterError(f"@{name}: {key} holds {entry}, not a #shard.axisarray")
        split = shard.split_axes_of(entry)
        flat = [a for axes in split for a in axes]
        rank = len(t.get_shape()) if isinstance(t, TensorType) else 0
        if len(set(flat)) != len(flat) or not all(0 <= a < len(grid) for a in flat) or len(split) > rank:
            raise InterpreterError(
                f"@{name}: {key} entry {entry} does not fit {t} on a grid of rank {len(grid)}"
            )
        out.append(split + ((),) * (rank - len(split)))
    return out


def _chunk_position(split: Sequence[Sequence[int]], grid: tuple[int, ...], coords: Sequence[int]) -> list[int]:
    """Which chunk of each dimension a device holds: row-major over that dimension's axes."""
    return [collectives.linear_index([grid[a] for a in axes], [coords[a] for a in axes]) for axes in split]


def _scatter(index: int, value: Any, t: Any, split, grid: tuple[int, ...], name: str, where: str) -> list[Any]:
    """Every device's chunk of the global argument #index `value` (a view; values are immutable)."""
    coords = collectives.device_coords(grid)
    if not isinstance(t, TensorType):
        return [value] * len(coords)  # scalars are replicated; run_spmd checks their type
    what = f"argument #{index} of @{name}"
    if isinstance(value, np.generic):
        value = np.asarray(value)
    if not isinstance(value, np.ndarray):
        raise InterpreterInputError(f"{what}: expected a numpy array, got {type(value).__name__}")
    local = t.get_shape()
    if value.ndim != len(local):
        raise InterpreterInputError(f"{what}: expected a rank-{len(local)} array, got shape {value.shape}")
    chunks = [shard.group_size(grid, axes) for axes in split]
    for d, (n, k, axes) in enumerate(zip(value.shape, chunks, split)):
        if n % k:
            raise InterpreterInputError(
                f"{what}: dimension {d} of shape {value.shape} (size {n}) does not split into {k} "
                f"equal chunks over axes {list(axes)} of {where}"
            )
    expected = tuple(c * n for c, n in zip(chunks, local))
    dtype = numpy_dtype(t.get_element_type())
    if value.shape != expected or value.dtype != dtype:
        raise InterpreterInputError(
            f"{what}: expected a global array of shape {expected} and dtype {dtype} ({t} per "
            f"device, split {[list(a) for a in split]} over {where}), got shape {value.shape} and "
            f"dtype {value.dtype}"
        )
    out = []
    for c in coords:
        pos = _chunk_position(split, grid, c)
        out.append(value[tuple(slice(p * n, (p + 1) * n) for p, n in zip(pos, local))])
    return out


def _same(a: Any, b: Any) -> bool:
    a, b = np.asarray(a), np.asarray(b)
    return a.shape == b.shape and a.dtype == b.dtype and np.array_equal(a, b, equal_nan=a.dtype.kind in "fc")


def _gather(index: int, values: Sequence[Any], split, grid: tuple[int, ...], name: str) -> Any:
    """The global result from every device's chunk; devices holding the same chunk must agree."""
    coords = collectives.device_coords(grid)
    first = values[0]
    owner: dict[tuple[int, ...], int] = {}
    for device, c in enumerate(coords):
        pos = tuple(_chunk_position(split, grid, c))
        if pos not in owner:
            owner[pos] = device
        elif not _same(values[owner[pos]], values[device]):
            kind = "replicated" if not any(split) else f"split {[list(a) for a in split]}"
            raise InterpreterError(
                f"result #{index} of @{name} is {kind}, but devices {coords[owner[pos]]} and {c} "
                "computed different values for the same chunk: a bug in the per-device program "
                "(the partitioner's output)"
            )
    if not any(split):
        return first
    local = first.shape
    out = np.empty([n * shard.group_size(grid, axes) for n, axes in zip(local, split)], first.dtype)
    for pos, device in owner.items():
        out[tuple(slice(p * n, (p + 1) * n) for p, n in zip(pos, local))] = values[device]
    return out


def grid_of_function(module: ModuleOp, func: FuncOp) -> tuple[str, tuple[int, ...]] | None:
    """The grid a per-device function runs on (its "shard.grid" attribute), or None."""
    ref = func.attributes.get("shard.grid")
    if ref is None:
        return None
    if not isinstance(ref, SymbolRefAttr) or ref.nested_references.data:
        raise InterpreterError(f"@{func.sym_name.data}: shard.grid is {ref}, not a symbol reference")
    grid = next(
        (op for op in module.ops if isinstance(op, shard.GridOp) and op.sym_name.data == ref.root_reference.data),
        None,
    )
    if grid is None:
        raise InterpreterError(f"@{func.sym_name.data} runs on grid {ref}, which is not a shard.grid of the module")
    return ref.root_reference.data, shard.grid_shape(grid)


def run_partitioned(
    module: ModuleOp, entry: str, global_args: Sequence[Value], runner: Any = None
) -> tuple[tuple[Value, ...], list[DeviceStats]]:
    """Run the per-device function `@entry` on global arguments; returns the global results and
    each device's communication counts.

    `runner(per_device_args) -> SpmdResult` runs the grid: by default the interpreter
    (`run_spmd`); irgrad/backends/spmd_cpu.py's `SpmdProgram.run` runs compiled code.

    The function's "shard.grid", "shard.arg_split_axes" and "shard.result_split_axes" say how
    each global argument is split over the grid and how each result is assembled; scalars and
    tensors with no split axes are replicated.
    """
    module = expand_autodiff(module)
    func = lookup_function(module, entry)
    name = func.sym_name.data
    found = grid_of_function(module, func)
    if found is None:
        raise InterpreterInputError(f"@{name} is not a per-device program: it has no shard.grid attribute")
    grid_name, grid = found
    where = f"grid @{grid_name} ({'x'.join(map(str, grid))})"
    inputs = func.function_type.inputs.data
    outputs = func.function_type.outputs.data
    if len(global_args) != len(inputs):
        raise InterpreterInputError(f"@{name} takes {len(inputs)} argument(s), got {len(global_args)}")
    arg_split = split_axes(func, "shard.arg_split_axes", inputs, grid)
    result_split = split_axes(func, "shard.result_split_axes", outputs, grid)

    per_arg = [
        _scatter(i, value, t, split, grid, name, where)
        for i, (value, t, split) in enumerate(zip(global_args, inputs, arg_split))
    ]
    per_device = [list(args) for args in zip(*per_arg)] if per_arg else [[] for _ in range(math.prod(grid))]
    run = runner(per_device) if runner is not None else run_spmd(module, entry, per_device, grid)
    results = tuple(
        _gather(r, [device[r] for device in run.results], result_split[r], grid, name)
        for r in range(len(outputs))
    )
    return results, run.stats
