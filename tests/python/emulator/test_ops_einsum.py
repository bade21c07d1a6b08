"""Einsum end to end (ONNX -> accel.compiler -> the emulator) against onnxruntime and numpy, every element:
matrix and batched products (attention's forms), transposes, sums, broadcast products, ellipsis, implicit
outputs, three operands, constant operands; what is refused with a CompileError."""
from __future__ import annotations

import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

from accel import compiler
from accel.compiler import accm

# The emulator's own ops: their semantics, not a device's (deselected on vendor devices).
pytestmark = pytest.mark.emulator


def einsum_model(eq, shapes, consts=None, opset=13):
    consts = consts or {}
    names = [f"x{i}" for i in range(len(shapes))]
    g = helper.make_graph(
        [helper.make_node("Einsum", names, ["y"], equation=eq)], "einsum",
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, list(s)) for n, s in zip(names, shapes)
         if n not in consts],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(np.asarray(v, np.float32), k) for k, v in consts.items()])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    return m


def data(shapes, seed=0):
    r = np.random.default_rng(seed)
    return [r.standard_normal(s).astype(np.float32) for s in shapes]


def check(dev, eq, shapes, const=()):
    """The emulator against onnxruntime and numpy (float64), every element."""
    arrays = data(shapes)
    consts = {f"x{i}": arrays[i] for i in const}
    m = einsum_model(eq, shapes, consts)
    feeds = {f"x{i}": a for i, a in enumerate(arrays) if f"x{i}" not in consts}
    got = np.array(dev.load(m.SerializeToString()).run(feeds)[0])
    want = np.einsum(eq, *[a.astype(np.float64) for a in arrays])
    assert got.shape == want.shape and got.dtype == np.float32
    tol = 1e-5 * max(1.0, float(np.abs(want).max(initial=0)))
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=tol)
    s = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    np.testing.assert_allclose(got, s.run(None, feeds)[0], rtol=1e-5, atol=tol)
    return m


CASES = [
    ("ij,jk->ik", [(3, 4), (4, 5)]),
    ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),
    ("bhqd,bhkd->bhqk", [(2, 3, 5, 8), (2, 3, 6, 8)]),
    ("bhqk,bhkd->bhqd", [(2, 3, 5, 6), (2, 3, 6, 8)]),
    ("bqhd,bkhd->bhqk", [(2, 5, 3, 8), (2, 6, 3, 8)]),
    ("bi,bi->b", [(4, 7), (4, 7)]),
    ("i,i", [(7,), (7,)]),
    ("i,j->ij", [(3,), (4,)]),
    ("ij->ji", [(3, 4)]),
    ("nchw->nhwc", [(2, 3, 4, 5)]),
    ("ij->i", [(3, 4)]),
    ("ijk->", [(2, 3, 4)]),
    ("ij", [(3, 4)]),
    ("ji", [(3, 4)]),
    ("bchw,c->bchw", [(2, 3, 4, 5), (3,)]),
    ("bchw,bc->bchw", [(2, 3, 4, 5), (2, 3)]),
    ("bchw,bc->bc", [(2, 3, 4, 5), (2, 3)]),
    ("ij,ij->ij", [(3, 4), (3, 4)]),
    ("ij,jk", [(3, 4), (4, 5)]),
    ("ik,jk->ij", [(3, 4), (5, 4)]),
    ("ij,jk->ki", [(3, 4), (4, 5)]),
    ("abc,cd->abd", [(2, 3, 4), (4, 5)]),
    ("abcd,cde->abe", [(2, 3, 4, 5), (4, 5, 6)]),
    ("bn,anm,bm->ba", [(2, 3), (4, 3, 5), (2, 5)]),
    ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 5)]),
    ("...ij,...jk->...ik", [(2, 3, 4, 5), (2, 3, 5, 6)]),
    ("...ij,...jk->...ik", [(2, 1, 4, 5), (1, 3, 5, 6)]),  # ellipsis dims broadcast
    ("...ij,jk", [(2, 3, 4), (4, 5)]),
    ("i...->...", [(3, 2, 4)]),
    ("b...d,b...d->b...", [(2, 3, 4, 5), (2, 3, 4, 5)]),
    ("ij,jk->ik", [(3, 1), (4, 5)]),                        # a size-1 label broadcasts
    ("BIJ,BJK->BIK", [(2, 3, 4), (2, 4, 5)]),
    (" ij , jk -> ik ", [(3, 4), (4, 5)]),
    ("ii->i", [(4, 4)]),                                    # diagonals
    ("ii", [(4, 4)]),
    ("bii->bi", [(2, 3, 3)]),
    ("...ii->...i", [(2, 3, 4, 4)]),
    ("iji->j", [(3, 4, 3)]),
    ("iii->i", [(3, 3, 3)]),
    ("ij,jj->ij", [(3, 4), (4, 4)]),
]


@pytest.mark.parametrize("eq,shapes", CASES)
def test_einsum_matches_onnxruntime(dev, eq, shapes):
    check(dev, eq, shapes)


@pytest.mark.parametrize("eq,shapes,const", [("bij,jk->bik", [(2, 3, 4), (4, 5)], [1]),
                                             ("bhqd,hkd->bhqk", [(2, 3, 5, 8), (3, 6, 8)], [1]),
                                             ("bchw,c->bchw", [(2, 3, 4, 5), (3,)], [1]),
                                             ("bij,jj->bij", [(2, 3, 4), (4, 4)], [1])])
def test_einsum_with_a_constant_operand(dev, eq, shapes, const):
    """A constant operand is transposed and reshaped at compile time."""
    m = check(dev, eq, shapes, const)
    assert "transpose" not in [n["op_name"] for n in accm.read(compiler.compile_model(m))["nodes"]]


@pytest.mark.parametrize("eq,shapes,want", [
    ("bhqd,bhkd->bhqk", [(2, 3, 5, 8), (2, 3, 6, 8)], ["transpose", "matmul"]),
    ("bhqk,bhkd->bhqd", [(2, 3, 5, 6), (2, 3, 6, 8)], ["matmul"]),
    ("bchw,c->bchw", [(2, 3, 4, 5), (3,)], ["copy", "mul"]),
    ("ij->ji", [(3, 4)], ["transpose"]),
    ("ij->i", [(3, 4)], ["reduce", "copy"]),
])
def test_einsum_lowering(eq, shapes, want):
    got = [n["op_name"] for n in accm.read(compiler.compile_model(einsum_model(eq, shapes)))["nodes"]]
    assert got == want


@pytest.mark.parametrize("eq,shapes,match", [
    ("ii->i", [(3, 4)], "label 'i' is 3 in one input and 4"),
    ("ii->i", [(1, 4)], "label 'i' is 1 and 4 in one operand"),
    ("ij,jk->ik", [(3, 4), (5, 6)], "label 'j' is 4 in one input and 5"),
    ("ij->k", [(3, 4)], "output label 'k' is in no input"),
    ("ij,jk", [(3, 4)], "2 operand terms for 1 inputs"),
    ("ijk->i", [(3, 4)], "does not fit an input of rank 2"),
    ("...ij->ij", [(2, 3, 4)], "no '...'"),
    ("i1->i", [(3, 4)], "is not letters"),
    ("ij->ii", [(3, 4)], "repeats a label"),
])
def test_einsum_compile_errors(eq, shapes, match):
    with pytest.raises(compiler.CompileError, match=match):
        compiler.compile_model(einsum_model(eq, shapes))


def test_einsum_integer_operands_are_refused():
    g = helper.make_graph([helper.make_node("Einsum", ["a", "b"], ["y"], equation="ij,jk->ik")], "e",
                          [helper.make_tensor_value_info("a", TensorProto.INT32, [2, 3]),
                           helper.make_tensor_value_info("b", TensorProto.INT32, [3, 4])],
                          [helper.make_tensor_value_info("y", TensorProto.INT32, None)])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    with pytest.raises(compiler.CompileError, match="float32 only"):
        compiler.compile_model(m)
