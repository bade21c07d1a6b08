"""A power-of-two QDQ model packed as vai_c_xir compiles it (make_xmodel.py --dpu-ops: conv2d-fix, eltwise-fix,
pool-fix, const-fix weights in REG_0, xint8 tensors with fix points) runs bit for bit alike on vart:0 (the stand-in),
on the emulator through the .xmodel, and on the emulator through the QDQ model it came from, each with the DPU's
rules. Runs on vart:0 (the vendor runs of the suite, ci/test.sh); deselected elsewhere.
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from onnx import TensorProto, helper

from accel.compiler import xir
from standin_toolchain import tool

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from models.device_qdq import const_dq_fp, count_differing, qdq_fp, run_on_emulator

pytestmark = pytest.mark.vendor("vart")

FX, FW1, FB1, F1, FW2, FB2, F2, FA, FM, FG = 5, 7, 4, 4, 6, 5, 3, 3, 3, 5


def _model(rng):
    """x -> conv 3x3 + relu -> conv 1x1 + leaky relu -> add + relu -> max pool (y_max) and global pool (y_avg)."""
    p = {"w1": rng.integers(-128, 128, (8, 4, 3, 3)), "b1": rng.integers(-128, 128, 8),
         "w2": rng.integers(-128, 128, (8, 8, 1, 1)), "b2": rng.integers(-128, 128, 8)}
    nodes, inits = [], []
    x = qdq_fp(nodes, inits, "x", FX)
    w1, b1 = const_dq_fp(nodes, inits, "w1", p["w1"], FW1), const_dq_fp(nodes, inits, "b1", p["b1"], FB1)
    nodes += [helper.make_node("Conv", [x, w1, b1], ["c1"], pads=[1, 1, 1, 1]),
              helper.make_node("Relu", ["c1"], ["r1"])]
    r1 = qdq_fp(nodes, inits, "r1", F1)
    w2, b2 = const_dq_fp(nodes, inits, "w2", p["w2"], FW2), const_dq_fp(nodes, inits, "b2", p["b2"], FB2)
    nodes += [helper.make_node("Conv", [r1, w2, b2], ["c2"]),
              helper.make_node("LeakyRelu", ["c2"], ["l2"], alpha=26 / 256)]
    l2 = qdq_fp(nodes, inits, "l2", F2)
    nodes += [helper.make_node("Add", [r1, l2], ["a"]), helper.make_node("Relu", ["a"], ["ar"])]
    a = qdq_fp(nodes, inits, "ar", FA)
    nodes.append(helper.make_node("MaxPool", [a], ["mp"], kernel_shape=[2, 2], strides=[2, 2]))
    qdq_fp(nodes, inits, "mp", FM, out="y_max")
    nodes.append(helper.make_node("GlobalAveragePool", [a], ["gp"]))
    qdq_fp(nodes, inits, "gp", FG, out="y_avg")
    g = helper.make_graph(nodes, "dpu_ops", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4, 8, 8])],
                          [helper.make_tensor_value_info("y_max", TensorProto.FLOAT, [1, 8, 4, 4]),
                           helper.make_tensor_value_info("y_avg", TensorProto.FLOAT, [1, 8, 1, 1])], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    return m, p


def test_qdq_model_as_real_dpu_ops_runs_alike_on_vart_and_the_emulator(dev, tmp_path):
    import accel

    model, p = _model(np.random.default_rng(21))
    onnx_path = tmp_path / "dpu_ops.onnx"
    onnx_path.write_bytes(model.SerializeToString())
    data = tool(".xmodel").build_dpu_ops(str(onnx_path))

    graph = xir.read(data)
    dpu = xir.dpu_subgraph(graph)
    types = sorted({graph.ops[n].type for n in dpu.ops()})
    assert types == ["const-fix", "conv2d-fix", "download", "eltwise-fix", "pool-fix", "upload"]
    assert graph.ops["c1"].attrs["nonlinear"] == "RELU" and graph.ops["c2"].attrs["nonlinear"] == "LEAKYRELU"
    w1 = graph.ops["c1_weights"].output
    reg = dpu.attrs["reg_id_to_parameter_value"]["REG_0"]
    addr = w1.attrs["ddr_addr"]
    stored = np.frombuffer(reg[addr:addr + p["w1"].size], np.int8).reshape(8, 3, 3, 4)
    np.testing.assert_array_equal(stored, p["w1"].transpose(0, 2, 3, 1))  # OHWI in REG_0
    assert (w1.attrs["reg_id"], w1.fix_point, graph.ops["c1"].output.fix_point) == (0, FW1, F1)

    path = tmp_path / "dpu_ops.xmodel"
    path.write_bytes(data)
    m = dev.load(str(path))
    assert [(o.name, o.shape, o.quant.shifts) for o in m.outputs] == [
        ("y_avg", (1, 1, 1, 8), (FG,)), ("y_max", (1, 4, 4, 8), (FM,))]
    q = np.random.default_rng(22).integers(-128, 128, (1, 8, 8, 4)).astype(np.int8)
    got = [np.asarray(o).copy() for o in m.run(q)]
    with accel.open("emu:int8=dpu") as emu:
        emu_model = emu.load(str(path))
        # One interface on both: the same tensors, named, shaped, laid out and quantized (fix points as shifts).
        for side in ("inputs", "outputs"):
            assert [(t.name, t.shape, t.dtype, t.layout, t.quant) for t in getattr(emu_model, side)] == \
                [(t.name, t.shape, t.dtype, t.layout, t.quant) for t in getattr(m, side)], side
        on_emu = [np.asarray(o).copy() for o in emu_model.run(q)]
    from_qdq = run_on_emulator(model, q.transpose(0, 3, 1, 2).astype(np.float32) * 2.0 ** -FX, "dpu")
    differ = 0
    for g, e, f, fp, name in zip(got, on_emu, from_qdq[::-1], (FG, FM), ("y_avg", "y_max")):
        differ += count_differing(f"vart:0 {name} against emu through the .xmodel", g, e)
        differ += count_differing(f"vart:0 {name} against emu through the QDQ model", g,
                                  np.rint(f.transpose(0, 2, 3, 1) * 2.0 ** fp).astype(np.int64))
    assert differ == 0
    assert any(np.any(g != 0) for g in got)


def _model_rest(rng):
    """The rest of the op set: x -> depthwise 3x3 + relu, concatenated with x -> nearest upsample x2 (y_up), and
    -> hard sigmoid -> global pool -> flatten (y_flat)."""
    fx, fw, fb, fd, fc, fh, fg = 5, 6, 4, 4, 4, 7, 6
    p = {"wd": rng.integers(-128, 128, (4, 1, 3, 3)), "bd": rng.integers(-128, 128, 4)}
    nodes, inits = [], []
    x = qdq_fp(nodes, inits, "x", fx)
    wd, bd = const_dq_fp(nodes, inits, "wd", p["wd"], fw), const_dq_fp(nodes, inits, "bd", p["bd"], fb)
    nodes += [helper.make_node("Conv", [x, wd, bd], ["d"], group=4, pads=[1, 1, 1, 1]),
              helper.make_node("Relu", ["d"], ["dr"])]
    d = qdq_fp(nodes, inits, "dr", fd)
    nodes.append(helper.make_node("Concat", [x, d], ["cat"], axis=1))
    cat = qdq_fp(nodes, inits, "cat", fc)
    inits.append(helper.make_tensor("up_scales", TensorProto.FLOAT, [4], [1, 1, 2, 2]))
    nodes.append(helper.make_node("Resize", [cat, "", "up_scales"], ["up"], mode="nearest",
                                  coordinate_transformation_mode="asymmetric", nearest_mode="floor"))
    qdq_fp(nodes, inits, "up", fc, out="y_up")
    nodes.append(helper.make_node("HardSigmoid", [cat], ["hs"], alpha=1 / 6, beta=0.5))
    hs = qdq_fp(nodes, inits, "hs", fh)
    nodes.append(helper.make_node("GlobalAveragePool", [hs], ["gp"]))
    gp = qdq_fp(nodes, inits, "gp", fg)
    nodes.append(helper.make_node("Flatten", [gp], ["fl"]))
    qdq_fp(nodes, inits, "fl", fg, out="y_flat")
    g = helper.make_graph(nodes, "dpu_rest", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4, 6, 6])],
                          [helper.make_tensor_value_info("y_up", TensorProto.FLOAT, [1, 8, 12, 12]),
                           helper.make_tensor_value_info("y_flat", TensorProto.FLOAT, [1, 8])], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    return m, fx, {"y_flat": fg, "y_up": fc}


def test_the_rest_of_the_op_set_runs_alike_on_vart_and_the_emulator(dev, tmp_path):
    """Depthwise convolution, concat, nearest upsample, hard sigmoid, global pool and flatten as real DPU ops."""
    import accel

    model, fx, fps = _model_rest(np.random.default_rng(25))
    onnx_path = tmp_path / "dpu_rest.onnx"
    onnx_path.write_bytes(model.SerializeToString())
    data = tool(".xmodel").build_dpu_ops(str(onnx_path))
    graph = xir.read(data)
    types = sorted({graph.ops[n].type for n in xir.dpu_subgraph(graph).ops()})
    assert types == ["concat-fix", "const-fix", "depthwise-conv2d-fix", "download", "hard-sigmoid-fix", "pool-fix",
                     "reshape-fix", "upload", "upsample-fix"]
    path = tmp_path / "dpu_rest.xmodel"
    path.write_bytes(data)
    q = np.random.default_rng(26).integers(-128, 128, (1, 6, 6, 4)).astype(np.int8)
    m = dev.load(str(path))
    got = [np.asarray(o).copy() for o in m.run(q)]
    with accel.open("emu:int8=dpu") as emu:
        on_emu = [np.asarray(o).copy() for o in emu.load(str(path)).run(q)]
    from_qdq = dict(zip(("y_up", "y_flat"),
                        run_on_emulator(model, q.transpose(0, 3, 1, 2).astype(np.float32) * 2.0 ** -fx, "dpu")))
    differ = 0
    for o, g, e in zip(m.outputs, got, on_emu):
        f = from_qdq[o.name]
        want = np.rint((f.transpose(0, 2, 3, 1) if f.ndim == 4 else f) * 2.0 ** fps[o.name]).astype(np.int64)
        differ += count_differing(f"vart:0 {o.name} against emu through the .xmodel", g, e)
        differ += count_differing(f"vart:0 {o.name} against emu through the QDQ model", g, want)
    assert differ == 0 and all(np.any(g != 0) for g in got)


def test_what_the_dpu_ops_packer_refuses_is_named(tmp_path):
    model, _ = _model(np.random.default_rng(23))
    path = tmp_path / "net.onnx"
    scales = {t.name: t for t in model.graph.initializer}
    scales["r1_s"].CopyFrom(helper.make_tensor("r1_s", TensorProto.FLOAT, [], [0.3]))
    path.write_bytes(model.SerializeToString())
    with pytest.raises(ValueError, match=r"QuantizeLinear 'r1_q'.*not one power of two"):
        tool(".xmodel").build_dpu_ops(str(path))
    model, _ = _model(np.random.default_rng(23))
    for n in model.graph.node:
        if n.op_type == "Relu" and n.output[0] == "ar":
            n.op_type = "Sigmoid"
    path.write_bytes(model.SerializeToString())
    with pytest.raises(ValueError, match="Sigmoid 'ar': the packer writes no DPU op"):
        tool(".xmodel").build_dpu_ops(str(path))


def test_a_subgraph_chosen_by_name_is_the_same_model_on_vart_and_the_emulator(dev, tmp_path):
    """Device.load(..., subgraph=) on vart:0 (accel_model_load_memory_with_options, ABI 1.4) and on emu:int8=dpu:
    a file with two DPU subgraphs (as Xilinx's tf2_custom_op and pointpillars), each subgraph its own model with
    the same tensors (names, shapes, layouts, fix points as shifts) and the same integers on both."""
    import accel
    from accel import compiler

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "emulator"))
    from test_xmodel import _network

    rng = np.random.default_rng(24)
    b, _ = _network(rng)
    g = b.graph()
    dpu = next(c for c in g.root.children if c.device == "DPU")
    cut = next(i for i, leaf in enumerate(dpu.children) if leaf.leaf_ops == ["pool"]) + 1
    halves = [xir.Subgraph("subgraph_first", dict(dpu.attrs), [], dpu.children[:cut]),
              xir.Subgraph("subgraph_second", dict(dpu.attrs), [], dpu.children[cut:])]
    at = g.root.children.index(dpu)
    g.root.children[at:at + 1] = halves
    for half in halves:  # the stand-in's DPU runs each subgraph's emulator model in place of its code
        onnx_bytes = xir.dpu_model(xir.write(g), half.name).SerializeToString()
        half.attrs["standin_accm"] = compiler.compile_model(onnx_bytes, int8="dpu")
    path = tmp_path / "two.xmodel"
    path.write_bytes(xir.write(g))

    with pytest.raises(accel.UnsupportedError, match=r"2 DPU subgraphs .*name the one"):
        dev.load(str(path))
    with pytest.raises(accel.InvalidArgumentError,
                       match="no DPU subgraph 'third'; its DPU subgraphs: 'subgraph_first'"):
        dev.load(str(path), subgraph="third")
    x = rng.integers(-128, 128, (1, 8, 8, 3)).astype(np.int8)
    with accel.open("emu:int8=dpu") as emu:
        feed = x
        for name in ("subgraph_first", "subgraph_second"):
            on_vart, on_emu = dev.load(str(path), subgraph=name), emu.load(str(path), subgraph=name)
            for side in ("inputs", "outputs"):
                assert [(t.name, t.shape, t.layout, t.quant) for t in getattr(on_vart, side)] == \
                    [(t.name, t.shape, t.layout, t.quant) for t in getattr(on_emu, side)], (name, side)
            got, want = on_vart.run(feed), on_emu.run(feed)
            for o, a, w in zip(on_vart.outputs, got, want):
                assert count_differing(f"{name} {o.name} on vart:0 against emu", np.asarray(a), np.asarray(w)) == 0
            feed = np.asarray(got[0]).copy()
        assert any(np.any(np.asarray(a) != 0) for a in got)
