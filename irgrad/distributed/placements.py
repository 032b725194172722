"""Device meshes and placements (torch.distributed.tensor's), and their shard-dialect meaning.

A placement says what one mesh axis does to a tensor; a tensor has one placement per mesh axis:

- `Shard(d)`: tensor dimension d is split into equal chunks along this mesh axis;
- `Replicate()`: every device along this mesh axis holds the same data;
- `Partial(op)`: the devices along this mesh axis each hold a *term* of the value, which is the
  `op` (sum, max, min) of their arrays. Partial exists because it is what computation leaves
  behind, and resolving it later is cheaper than resolving it at once: a matmul contracting over
  a split dimension gives each device the partial sum over its own slice of that dimension, and
  a reduce_scatter (or nothing, if the next op is linear) beats an all_reduce.

The shard dialect spells the same layout per *tensor* dimension: `split_axes[d]` lists the mesh
axes dimension d is split over, and the chunk index is row-major over them. Placements in mesh
axis order give exactly that order: `[Shard(0), Shard(0)]` on a 2x3 mesh is `split_axes =
[[0, 1]]`, chunk `c0 * 3 + c1` (torch's nesting of the mesh axes too). A sharding whose
split_axes list a dimension's axes in another order has no placements spelling.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Union

from irgrad.dialects.shard import ReductionKind, Sharding

REDUCE_OPS = {"sum": ReductionKind.SUM, "max": ReductionKind.MAX, "min": ReductionKind.MIN}


@dataclass(frozen=True)
class Mesh:
    """A grid of simulated devices: `Mesh((2, 3))` has 6 devices, numbered row-major.

    `name` is the symbol of the `shard.grid` op traced code refers to; `axis_names` ("x", "y",
    ... by default) are for messages and for `axis("y")`.
    """

    shape: tuple[int, ...]
    axis_names: tuple[str, ...] = ()
    name: str = "mesh"

    def __init__(
        self, shape: int | Sequence[int], axis_names: Sequence[str] | None = None, name: str = "mesh"
    ):
        dims = (shape,) if isinstance(shape, int) else tuple(shape)
        if not dims or any(not isinstance(n, int) or isinstance(n, bool) or n < 1 for n in dims):
            raise ValueError(f"Mesh: shape {shape!r} must be a non-empty tuple of positive ints")
        if axis_names is None:
            axis_names = ["xyzwuv"[i] if i < 6 else f"a{i}" for i in range(len(dims))]
        names = tuple(axis_names)
        if len(names) != len(dims) or len(set(names)) != len(names):
            raise ValueError(f"Mesh: axis_names {names} must be {len(dims)} distinct names for shape {dims}")
        if not name.isidentifier():
            raise ValueError(f"Mesh: name {name!r} is not a valid symbol name")
        object.__setattr__(self, "shape", tuple(int(n) for n in dims))
        object.__setattr__(self, "axis_names", names)
        object.__setattr__(self, "name", name)

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        n = 1
        for d in self.shape:
            n *= d
        return n

    @property
    def devices(self) -> list[tuple[int, ...]]:
        """Every device's coordinates, in device (row-major) order."""
        from irgrad.backends.interpreter.collectives import device_coords  # (the interpreter: slow)

        return device_coords(self.shape)

    def axis(self, axis: int | str) -> int:
        """A mesh axis by index or name."""
        if isinstance(axis, str):
            if axis not in self.axis_names:
                raise ValueError(f"{self!r} has no axis named {axis!r}")
            return self.axis_names.index(axis)
        if not -self.ndim <= axis < self.ndim:
            raise ValueError(f"{self!r} has no axis {axis}")
        return axis % self.ndim

    def describe_axis(self, axis: int) -> str:
        return f"mesh axis {axis} ('{self.axis_names[axis]}', size {self.shape[axis]})"

    def __repr__(self) -> str:
        extra = f", name={self.name!r}" if self.name != "mesh" else ""
        return f"Mesh({self.shape}, {self.axis_names}{extra})"


@dataclass(frozen=True)
class Shard:
    """Tensor dimension `dim` is split into equal chunks along this mesh axis."""

    dim: int

    def __repr__(self) -> str:
        return f"Shard({self.dim})"


@dataclass(frozen=True)
class Replicate:
    """Every device along this mesh axis holds the same data."""

    def __repr__(self) -> str:
        return "Replicate()"


@dataclass(frozen=True)
class Partial:
    """The value is the `reduce_op` ("sum", "max" or "min") of the arrays along this mesh axis:
    a pending reduction, as a matmul over a split contraction dimension leaves it."""

    reduce_op: str = "sum"

    def __post_init__(self) -> None:
        if self.reduce_op not in REDUCE_OPS:
            raise ValueError(f"Partial: reduce_op {self.reduce_op!r} is not one of {sorted(REDUCE_OPS)}")

    @property
    def reduction(self) -> ReductionKind:
        return REDUCE_OPS[self.reduce_op]

    def __repr__(self) -> str:
        return "Partial()" if self.reduce_op == "sum" else f"Partial({self.reduce_op!r})"


Placement = Union[Shard, Replicate, Partial]


def _where(placements: Sequence[Placement], shape: Sequence[int] | None, ndim: int) -> str:
    tensor = f"shape {tuple(shape)}" if shape is not None else f"rank {ndim}"
    return f"placements {tuple(placements)} for a tensor of {tensor}"


def normalize_placements(
    placements: Sequence[Placement], ndim: int, mesh: Mesh | None = None, shape: Sequence[int] | None = None
) -> tuple[Placement, ...]:
    """`placements` as a tuple, negative Shard dims made positive, after checking each one:
    one per mesh axis, dims in range, a single reduce_op for all Partial axes."""
    if isinstance(placements, (Shard, Replicate, Partial)):
        placements = (placements,)
    given = tuple(placements)
    where = _where(given, shape, ndim)
    if mesh is not None and len(given) != mesh.ndim:
        raise ValueError(f"{where}: need one placement per mesh axis of {mesh!r}, got {len(given)}")
    out: list[Placement] = []
    ops = set()
    for p in given:
        if isinstance(p, Shard):
            if not isinstance(p.dim, int) or not -ndim <= p.dim < ndim:
                raise ValueError(f"{where}: {p!r} names dimension {p.dim}, out of range for rank {ndim}")
            p = Shard(p.dim % ndim)
        elif isinstance(p, Partial):
            ops.add(p.reduce_op)
        elif not isinstance(p, Replicate):
            raise TypeError(f"{where}: {p!r} is not a placement (Shard, Replicate or Partial)")
        out.append(p)
    if len(ops) > 1:
        raise ValueError(
            f"{where}: Partial placements with different reduce_ops ({', '.join(sorted(ops))}) cannot be "
            "combined; resolve one of them first"
        )
    return tuple(out)


def check_divisible(placements: Sequence[Placement], mesh: Mesh, shape: Sequence[int]) -> None:
    """Every split dimension divides evenly into its chunks (what distribute_tensor and the
    shard dialect need), else a ValueError naming the dimension, its size and the mesh axes."""
    sharding = placements_to_sharding(placements, len(shape))
    for d, axes in enumerate(sharding.split):
        chunks = 1
        for a in axes:
            chunks *= mesh.shape[a]
        if shape[d] % chunks:
            over = " and ".join(mesh.describe_axis(a) for a in axes)
            raise ValueError(
                f"{_where(placements, shape, len(shape))} on {mesh!r}: dimension {d} of size "
                f"{shape[d]} does not divide evenly over {over}"
                + (f" ({chunks} chunks)" if len(axes) > 1 else "")
            )


def placements_to_sharding(
    placements: Sequence[Placement], ndim: int, shape: Sequence[int] | None = None
) -> Sharding:
    """The shard dialect's `Sharding` of a rank-`ndim` tensor with these placements (one per
    mesh axis): mesh axis i with Shard(d) goes to `split[d]`, in mesh axis order; Partial axes
    go to `partial`."""
    placements = normalize_placements(placements, ndim, shape=shape)
    split: list[list[int]] = [[] for _ in range(ndim)]
    partial: list[int] = []
    reduction = ReductionKind.SUM
    for axis, p in enumerate(placements):
        if isinstance(p, Shard):
            split[p.dim].append(axis)
        elif isinstance(p, Partial):
            partial.append(axis)
            reduction = p.reduction
    return Sharding(tuple(tuple(a) for a in split), tuple(partial), reduction)


def sharding_to_placements(sharding: Sharding, mesh: Mesh | int) -> tuple[Placement, ...]:
    """The placements (one per axis of `mesh`, or of a mesh of that rank) of `sharding`."""
    rank = mesh if isinstance(mesh, int) else mesh.ndim
    out: list[Placement] = [Replicate()] * rank
    used: dict[int, str] = {}

    def claim(axis: int, what: str) -> None:
        if not 0 <= axis < rank:
            raise ValueError(
                f"sharding {sharding.describe()}: {what} names mesh axis {axis}, but the mesh has rank {rank}"
            )
        if axis in used:
            raise ValueError(
                f"sharding {sharding.describe()}: mesh axis {axis} is used by {used[axis]} and {what}"
            )
        used[axis] = what

    for d, axes in enumerate(sharding.split):
        if list(axes) != sorted(axes):
            raise ValueError(
                f"sharding {sharding.describe()} splits dimension {d} over mesh axes {list(axes)}; "
                "placements can only express them in mesh axis order"
            )
        for a in axes:
            claim(a, f"dimension {d}")
            out[a] = Shard(d)
    if sharding.partial:
        op = next((k for k, v in REDUCE_OPS.items() if v == sharding.reduction), None)
        if op is None:
            raise ValueError(
                f"sharding {sharding.describe()}: no Partial placement for reduction "
                f"'{sharding.reduction.value}'"
            )
        for a in sharding.partial:
            claim(a, "the partial reduction")
            out[a] = Partial(op)
    return tuple(out)
