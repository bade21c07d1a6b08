"""The VART stand-in's files are XIR's serialized graph: what its packer (tests/standin/vart/tools/make_xmodel.py)
writes reads back through accel.compiler.xir.read, and the DPU subgraph's boundary there (XIR's semantics: the
tensors of ops outside it that its ops read, its ops' tensors read outside it or by none, sorted by name) is what
the stand-in's libxir and runner give the vart driver: names, shapes, dtypes and fix points. Runs on vart:0 (the
vendor runs of the suite, ci/test.sh); deselected elsewhere.
"""
from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from accel.compiler import xir
from standin_toolchain import tool

pytestmark = pytest.mark.vendor("vart")


def _onnx(tmp_path):
    """Inputs "zeta" (4-D) and "alpha" (2-D), outputs "out_b" and "out_a" (4-D and 2-D): neither in name order."""
    g = helper.make_graph(
        [helper.make_node("Mul", ["zeta", "half"], ["out_b"]), helper.make_node("Add", ["alpha", "alpha"], ["out_a"])],
        "two_by_two",
        [helper.make_tensor_value_info("zeta", TensorProto.FLOAT, [1, 3, 4, 5]),
         helper.make_tensor_value_info("alpha", TensorProto.FLOAT, [1, 6])],
        [helper.make_tensor_value_info("out_b", TensorProto.FLOAT, [1, 3, 4, 5]),
         helper.make_tensor_value_info("out_a", TensorProto.FLOAT, [1, 6])],
        [numpy_helper.from_array(np.array(0.5, np.float32), "half")])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    path = tmp_path / "two_by_two.onnx"
    path.write_bytes(m.SerializeToString())
    return path


def _boundary(graph: xir.Graph, subgraph: xir.Subgraph):
    """XIR's Subgraph::get_sorted_input_tensors and get_sorted_output_tensors, from the graph as read."""
    inside = set(subgraph.ops())
    readers = graph.consumers()
    ins = {src for name in inside for src in graph.ops[name].input_ops() if src not in inside}
    outs = {name for name in inside if not readers[name] or any(r not in inside for r in readers[name])}
    return ([graph.ops[n].output for n in sorted(ins, key=lambda n: graph.ops[n].output.name)],
            [graph.ops[n].output for n in sorted(outs, key=lambda n: graph.ops[n].output.name)])


def _dpu(data: bytes):
    graph = xir.read(data)
    (dpu,) = graph.subgraphs("DPU")
    return graph, dpu


def test_packed_xint8_file_reads_back_as_the_stand_in_gives_it(dev, tmp_path):
    data = tool(".xmodel").build(str(_onnx(tmp_path)), {"zeta": 5, "alpha": 4, "out_b": 6, "out_a": 3})
    graph, dpu = _dpu(data)
    ins, outs = _boundary(graph, dpu)
    assert [t.name for t in ins] == ["alpha", "zeta"] and [t.name for t in outs] == ["out_a", "out_b"]
    assert [(t.type_name, t.shape, t.fix_point) for t in ins + outs] == [
        ("xint8", (1, 6), 4), ("xint8", (1, 4, 5, 3), 5), ("xint8", (1, 6), 3), ("xint8", (1, 4, 5, 3), 6)]
    assert isinstance(dpu.attrs["standin_accm"], bytes) and dpu.attrs["standin_accm"][:4] == b"ACCM"
    # Every DPU op in a leaf of its own, as vai_c_xir writes them; a USER subgraph per input, a CPU one per output.
    assert all(not c.children and len(c.leaf_ops) == 1 for c in dpu.children)
    assert [len(graph.subgraphs(d)) for d in ("USER", "CPU")] == [2, 2]

    path = tmp_path / "two_by_two.xmodel"
    path.write_bytes(data)
    model = dev.load(str(path))
    for infos, tensors in ((model.inputs, ins), (model.outputs, outs)):
        assert [(i.name, tuple(i.shape), i.dtype, i.quant.shifts) for i in infos] == [
            (t.name, t.shape, np.int8, (t.fix_point,)) for t in tensors]
    assert [i.layout for i in model.inputs] == [None, "NHWC"]


def test_packed_float_file_reads_back_as_the_stand_in_gives_it(dev, tmp_path):
    from accel import compiler

    accm = compiler.compile_model(str(_onnx(tmp_path)), int8="dpu")
    data = tool(".xmodel").pack_accm("two_by_two", accm)
    graph, dpu = _dpu(data)
    ins, outs = _boundary(graph, dpu)
    assert dpu.attrs["standin_tensor_format"] == "NCHW" and not graph.subgraphs("CPU")
    assert [(t.name, t.type_name, t.shape, t.fix_point) for t in ins + outs] == [
        ("alpha", "float32", (1, 6), None), ("zeta", "float32", (1, 3, 4, 5), None),
        ("out_a", "float32", (1, 6), None), ("out_b", "float32", (1, 3, 4, 5), None)]
    model = dev.load(data)
    for infos, tensors in ((model.inputs, ins), (model.outputs, outs)):
        assert [(i.name, tuple(i.shape), i.dtype) for i in infos] == [(t.name, t.shape, np.float32) for t in tensors]
    # The outputs are matched to the emulator model's by name: out_a = 2 * alpha, out_b = zeta / 2.
    alpha = np.arange(6, dtype=np.float32).reshape(1, 6)
    zeta = np.ones((1, 3, 4, 5), np.float32)
    out_a, out_b = model.run([alpha, zeta])
    np.testing.assert_array_equal(np.asarray(out_a), 2 * alpha)
    np.testing.assert_array_equal(np.asarray(out_b), zeta / 2)
