"""The shard dialect's collectives between processes, over MPI (mpi4py).

One process plays one device of the grid. `ProcessGroup` (process_group.py) owns this
process's MPI communicators, checks at every collective that the processes agree on it
(header.py) and gives every wait a deadline; `reproducible.py` computes each collective with a
fixed reduction order, so results are bit-identical across processes, across runs and to the
simulated grid (irgrad/backends/interpreter/collectives.py), whatever order MPI would use.
`MpiGrid` is the `Communicator` a per-device program's collectives call (as the simulated
grid's `GridCommunicator` is).

mpi4py is imported by these modules only: the package is loaded when a program runs on several
processes (irgrad/distributed/process.py decides that).
"""

from irgrad.backends.mpi.errors import CollectiveError, CollectiveTimeout, RanksDisagree
from irgrad.backends.mpi.process_group import MpiGrid, ProcessGroup

__all__ = ["CollectiveError", "CollectiveTimeout", "MpiGrid", "ProcessGroup", "RanksDisagree"]
