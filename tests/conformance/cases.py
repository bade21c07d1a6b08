"""onnx's backend node test cases, generated in memory from the installed onnx wheel.

The wheel ships the generators of its node tests (onnx.backend.test.case.node), not their data:
collect_testcases() imports every generator module, whose export functions build each case's model and
its input and output arrays (seeded, so the same on every run). Nothing is written to disk.

A case tests one op: its model is that op's single node, or, for the "_expanded" cases, the node's
function body (other ops computing the same thing), named after the case it expands.
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
import onnx
from onnx import numpy_helper

EXPANDED = "_expanded"


@dataclass(frozen=True)
class Case:
    name: str               # onnx's test name, e.g. "test_conv_with_strides_padding"
    op: str                 # the op under test
    model: onnx.ModelProto
    inputs: tuple           # one value per graph input, in order (ndarrays; sequences for sequence ops)
    outputs: tuple          # one value per graph output, in order
    rtol: float
    atol: float

    @property
    def expanded(self) -> bool:
        """The model is the op's function body rather than the op itself."""
        return EXPANDED in self.name


def _value(v):
    """A case's input or output as numpy (onnx's generators give arrays, TensorProtos or lists)."""
    if isinstance(v, onnx.TensorProto):
        return numpy_helper.to_array(v)
    if isinstance(v, list):
        return [_value(x) for x in v]
    if isinstance(v, np.generic):  # numpy scalars (Clip's min, a 1-D MatMul's result) as 0-d arrays
        return np.asarray(v)
    return v


def _generated():
    """Every node test case of the installed onnx (about 1,900 in onnx 1.23; ~15 s on one core)."""
    from onnx.backend.test.case import node

    with warnings.catch_warnings(), np.errstate(all="ignore"):
        # The generators' own overflow and divide-by-zero warnings (cast and reduce references).
        warnings.simplefilter("ignore")
        return node.collect_testcases()


def collect(ops=None) -> list:
    """The node test cases whose op under test is in `ops` (every case with ops=None), in onnx's order.

    Each onnx case is single-node except the expanded ones, which follow the case they expand (named
    `<case>_expanded` or `<case>_expanded_ver<N>`): the op under test comes from that case's node.
    """
    op_of = {}
    out = []
    for tc in _generated():
        if EXPANDED in tc.name:
            op = op_of.get(tc.name[:tc.name.index(EXPANDED)])
        else:
            op = tc.model.graph.node[0].op_type if len(tc.model.graph.node) == 1 else None
            op_of[tc.name] = op
        if op is None or (ops is not None and op not in ops):
            continue
        sets = list(tc.data_sets or ())
        for i, (inputs, outputs) in enumerate(sets):
            name = tc.name if len(sets) == 1 else f"{tc.name}[{i}]"
            out.append(Case(name, op, tc.model, tuple(_value(x) for x in inputs),
                            tuple(_value(x) for x in outputs), float(tc.rtol), float(tc.atol)))
    return out
