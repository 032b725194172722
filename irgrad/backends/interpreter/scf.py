"""`scf` control flow: xDSL's implementations, with loop counters in irgrad's value model.

xDSL's `scf.if`, `scf.while`, `scf.yield` and `scf.condition` only pass values through and
test truthiness, so they are reused as they are; `scf.for` and `scf.index_switch` read their
bounds as `IntegerAttr`s there, so they are overridden to take Python ints (index) and numpy
integer scalars. Loop-carried values, tensors included, are ordinary values. `scf.parallel`
runs its iterations one after another in order, which is one of the schedules it allows.
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
from xdsl.dialects import scf
from xdsl.dialects.builtin import IndexType
from xdsl.interpreter import (
    Interpreter,
    PythonValues,
    ReturnedValues,
    impl_terminator,
    register_impls,
)
from xdsl.interpreters.scf import ScfFunctions as XdslScfFunctions

from irgrad.backends.interpreter.arith import element_dtype
from irgrad.backends.interpreter.errors import UndefinedBehaviorError
from irgrad.backends.interpreter.values import numpy_impl


@register_impls
class ScfFunctions(XdslScfFunctions):
    @numpy_impl(scf.ForOp)
    def run_for(self, interpreter: Interpreter, op: scf.ForOp, args: PythonValues):
        lb, ub, step, *loop_args = args
        if int(step) <= 0:
            raise UndefinedBehaviorError(f"step {int(step)} is not positive", op)
        iv_type = op.lb.type
        is_index = isinstance(iv_type, IndexType)
        results: tuple[Any, ...] = tuple(loop_args)
        for i in range(int(lb), int(ub), int(step)):
            iv = i if is_index else np.array(i).astype(element_dtype(iv_type))[()]
            results = interpreter.run_ssacfg_region(op.body, (iv, *results), "scf.for")
        return results

    @numpy_impl(scf.IndexSwitchOp)
    def run_index_switch(
        self, interpreter: Interpreter, op: scf.IndexSwitchOp, args: PythonValues
    ):
        index = int(args[0])
        cases: tuple[int, ...] = op.cases.get_values()
        if index in cases:
            position = cases.index(index)
            return interpreter.run_ssacfg_region(
                op.case_regions[position], (), f"scf.index_switch case {index}"
            )
        return interpreter.run_ssacfg_region(op.default_region, (), "scf.index_switch default")

    @numpy_impl(scf.ParallelOp)
    def run_parallel(self, interpreter: Interpreter, op: scf.ParallelOp, args: PythonValues):
        """Runs the iterations in order (one valid schedule); scf.reduce combines into the inits."""
        n = len(op.lowerBound)
        lbs, ubs, steps = args[:n], args[n : 2 * n], args[2 * n : 3 * n]
        accumulators = list(args[3 * n :])
        if any(int(s) <= 0 for s in steps):
            raise UndefinedBehaviorError(
                f"steps {[int(s) for s in steps]} are not all positive", op
            )
        reduce_op = op.body.block.last_op
        assert isinstance(reduce_op, scf.ReduceOp)
        ranges = (range(int(lb), int(ub), int(st)) for lb, ub, st in zip(lbs, ubs, steps))
        for point in itertools.product(*ranges):
            values = interpreter.run_ssacfg_region(op.body, point, "scf.parallel")
            for i, (region, value) in enumerate(zip(reduce_op.reductions, values)):
                (accumulators[i],) = interpreter.run_ssacfg_region(
                    region, (accumulators[i], value), "scf.reduce"
                )
        return tuple(accumulators)

    @impl_terminator(scf.ReduceOp)
    def run_reduce(self, interpreter: Interpreter, op: scf.ReduceOp, args: PythonValues):
        return ReturnedValues(args), ()

    @impl_terminator(scf.ReduceReturnOp)
    def run_reduce_return(
        self, interpreter: Interpreter, op: scf.ReduceReturnOp, args: PythonValues
    ):
        return ReturnedValues(args), ()

    @numpy_impl(scf.ExecuteRegionOp)
    def run_execute_region(
        self, interpreter: Interpreter, op: scf.ExecuteRegionOp, args: PythonValues
    ):
        return interpreter.run_ssacfg_region(op.region, (), "scf.execute_region")
