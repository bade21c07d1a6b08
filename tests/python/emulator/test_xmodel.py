"""A compiled Vitis AI model (.xmodel) on the emulator: read from XIR's serialized graph, its DPU subgraph computed as
the DPUCZDX8G computes (the dpu int8 rules), held bit for bit against the numpy reference of the fix ops
(tests/models/fixed_point.py) on a network of every op kind the front end takes, with small shifts so that many
values sit on ties (DPU_ROUND rounds them up); its tensors are the subgraph's as VART's runner gives them (names,
xint8, NHWC, 2^-fix_point). And every kind of bad file refused with a message naming what is wrong."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import accel
from accel.compiler import xir

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from models.device_qdq import count_differing
from models.fixed_point import add_fix, avg_coef, conv_fix, maxpool, round_up, sat8, window_sum
from models.xmodel_builder import XmodelBuilder

FX, FW1, FB1, F1 = 4, 6, 5, 3      # input; conv1's weights, bias, output: shift 7, bias << 5
FWD, FD = 5, 3                     # depthwise weights, output (leaky): shift 6
FA, FC, FP = 2, 2, 1               # add (relu), 1x1 conv, average pool outputs


def _network(rng, params=None):
    """(the builder, the int8 parameters: drawn from rng, or `params`) of: conv 3x3 relu -> max pool 2 -> depthwise
    3x3 leaky relu, added to the pool's output with relu -> conv 1x1 -> concat with the add -> average pool 2 ->
    reshape to [1, 48]; outputs the reshape and the add."""
    p = params or {"w1": rng.integers(-40, 40, (8, 3, 3, 3)), "b1": rng.integers(-60, 60, 8),
                   "wd": rng.integers(-60, 60, (1, 3, 3, 8)), "w3": rng.integers(-50, 50, (4, 1, 1, 8))}
    b = XmodelBuilder("xmodel_test_net")
    x = b.input("x", (1, 8, 8, 3), FX)
    w1, b1 = b.const("w1", p["w1"], FW1), b.const("b1", p["b1"], FB1)
    c1 = b.op("conv2d-fix", "conv1", {"input": [x], "weights": [w1], "bias": [b1]}, (1, 8, 8, 8), F1,
              kernel=[3, 3], stride=[1, 1], dilation=[1, 1], pad=[1, 1, 1, 1], pad_mode="FLOOR", group=1,
              nonlinear="RELU")
    pool = b.op("pool-fix", "pool", {"input": [c1]}, (1, 4, 4, 8), F1, type="MAX", kernel=[2, 2], stride=[2, 2],
                pad=[0, 0, 0, 0])
    wd = b.const("wd", p["wd"], FWD)
    d = b.op("depthwise-conv2d-fix", "dw", {"input": [pool], "weights": [wd]}, (1, 4, 4, 8), FD,
             kernel=[3, 3], stride=[1, 1], dilation=[1, 1], pad=[1, 1, 1, 1], nonlinear="LEAKYRELU")
    add = b.op("eltwise-fix", "add", {"input": [pool, d]}, (1, 4, 4, 8), FA, type="ADD", nonlinear="RELU")
    w3 = b.const("w3", p["w3"], 6)
    c3 = b.op("conv2d-fix", "conv3", {"input": [add], "weights": [w3]}, (1, 4, 4, 4), FC, kernel=[1, 1],
              stride=[1, 1], pad=[0, 0, 0, 0], nonlinear="NONE")
    cat = b.op("concat-fix", "cat", {"input": [add, c3]}, (1, 4, 4, 12), FA, axis=3)
    avg = b.op("pool-fix", "avg", {"input": [cat]}, (1, 2, 2, 12), FP, type="AVG", kernel=[2, 2], stride=[2, 2],
               pad=[0, 0, 0, 0])
    flat = b.op("reshape-fix", "flat", {"input": [avg]}, (1, 48), FP, shape=[1, 48])
    b.output(flat)
    b.output(add)
    return b, p


def _reference(x_nhwc, p):
    """The DPU's integers for the network, from the fix ops' numpy reference (NCHW inside)."""
    x = x_nhwc.transpose(0, 3, 1, 2).astype(np.int64)
    w1 = p["w1"].transpose(0, 3, 1, 2)
    c1 = conv_fix(x, w1, p["b1"], FX, FW1, FB1, F1, act="relu", pad=1)
    pool = maxpool(c1, 2)
    wd = p["wd"].reshape(3, 3, 8).transpose(2, 0, 1)[:, None]
    d = conv_fix(pool, wd, np.zeros(8, np.int64), F1, FWD, 0, FD, act="leaky", pad=1, groups=8)
    add = add_fix(pool, F1, d, FD, FA, relu=True)
    c3 = conv_fix(add, p["w3"].transpose(0, 3, 1, 2), np.zeros(4, np.int64), FA, 6, 0, FC)
    cat = np.concatenate([add, c3], axis=1)
    mult, shift = avg_coef(2, 2)
    sums = window_sum(cat, 2)[:, :, ::2, ::2] * mult
    avg = sat8(round_up(sums, shift + FA - FP))
    # The values that sit on a tie, where DPU_ROUND (half up) and rounding half to even differ: the add's aligned
    # sums (7 fraction bits more than the smaller input's) and the average pool's.
    ties = _ties((pool << 7) + (d << 7), F1 + 7 - FA) + _ties(sums, shift + FA - FP)
    return [avg.transpose(0, 2, 3, 1).reshape(1, 48), add.transpose(0, 2, 3, 1)], ties


def _ties(v, shift):
    return int(np.count_nonzero((v & ((1 << shift) - 1)) == (1 << (shift - 1))))


@pytest.fixture(scope="module")
def dpu_device():
    with accel.open("emu:int8=dpu") as dev:
        yield dev


@pytest.mark.parametrize("seed", [0, 1])
def test_a_compiled_model_runs_as_the_dpu_computes(tmp_path, dpu_device, seed):
    rng = np.random.default_rng(seed)
    b, p = _network(rng)
    path = tmp_path / "net.xmodel"
    path.write_bytes(b.bytes())
    model = dpu_device.load(str(path))
    x = rng.integers(-128, 128, (1, 8, 8, 3)).astype(np.int8)
    got = model.run(x)[::-1]  # the outputs by name: the add's, then the reshape's
    want, ties = _reference(x, p)
    print(f"\n{ties} of the values rounded sit on a tie")
    assert ties > 0
    for name, g, w in zip(("the reshaped average pool", "the add"), got, want):
        assert g.dtype == np.int8
        assert count_differing(f"{name} against the DPU reference", g, w) == 0


def test_its_tensors_are_the_subgraphs_as_vart_gives_them(tmp_path, dpu_device):
    b, _ = _network(np.random.default_rng(0))
    path = tmp_path / "net.xmodel"
    path.write_bytes(b.bytes())
    model = dpu_device.load(str(path))
    (x,) = model.inputs
    assert (x.name, x.shape, x.dtype, x.layout) == ("x", (1, 8, 8, 3), np.int8, "NHWC")
    # Fix points as VART's driver reports them: shifts (real = q / 2^shift).
    assert (x.quant.type, x.quant.shifts, x.quant.scales) == ("shift", (FX,), ())
    add, flat = model.outputs  # by name, as XIR sorts a subgraph's tensors
    assert (flat.name, flat.shape, flat.dtype, flat.layout) == ("flat_fix_download", (1, 48), np.int8, None)
    assert (add.name, add.shape, add.layout) == ("add_fix_download", (1, 4, 4, 8), "NHWC")
    assert flat.quant.shifts == (FP,) and add.quant.shifts == (FA,)


def test_the_reader_keeps_every_op_and_attribute_through_the_writer():
    b, _ = _network(np.random.default_rng(0))
    data = b.bytes()
    g = xir.read(data)
    assert list(g.ops) == list(b.ops)
    assert g.ops == b.graph().ops
    assert xir.read(xir.write(g)).ops == g.ops
    dpu = xir.dpu_subgraph(g)
    assert dpu.attrs["dpu_name"] == "DPUCZDX8G_ISA1_B4096" and len(dpu.attrs["reg_id_to_parameter_value"]["REG_0"])


def test_a_device_of_other_rules_says_which_to_open(tmp_path):
    b, _ = _network(np.random.default_rng(0))
    path = tmp_path / "net.xmodel"
    path.write_bytes(b.bytes())
    with accel.open("emu") as dev, pytest.raises(accel.UnsupportedError, match="emu:int8=dpu"):
        dev.load(str(path))


def _load(tmp_path, dev, data):
    path = tmp_path / "bad.xmodel"
    path.write_bytes(data)
    return dev.load(str(path))


def _edited(edit):
    b, _ = _network(np.random.default_rng(0))
    g = b.graph()
    edit(g)
    return xir.write(g)


def _replace(g, name, **changes):
    op = g.ops[name]
    g.ops[name] = xir.Op(changes.get("name", op.name), changes.get("type", op.type), changes.get("attrs", op.attrs),
                         changes.get("inputs", op.inputs), changes.get("output", op.output))


def _dpu(g):
    return next(c for c in g.root.children if c.device == "DPU")


BAD_FILES = {
    "not protobuf": (lambda: b"\xff\xff\xff\xff garbage", accel.ModelFormatError, "not a serialized XIR graph"),
    "truncated": (lambda: _edited(lambda g: None)[:300], accel.ModelFormatError, "not a serialized XIR graph"),
    "a graph of no ops": (lambda: b"\x0a\x04test", accel.ModelFormatError, "no ops"),
    "a cycle": (lambda: _edited(lambda g: _replace(g, "pool", inputs={"input": ["add"]})), accel.ModelFormatError,
                "cycle"),
    "an unknown argument": (lambda: _edited(lambda g: _replace(g, "conv3", inputs={"input": ["nowhere"]})),
                            accel.ModelFormatError, "'nowhere', which the graph does not have"),
    "weights past the register": (lambda: _edited(lambda g: _dpu(g).attrs.update(
        reg_id_to_parameter_value={"REG_0": b"\0" * 100})), accel.ModelFormatError, "pass the end of REG_0"),
    "an op the front end does not take": (lambda: _edited(lambda g: _replace(g, "avg", type="gstiling-fix")),
                                          accel.UnsupportedError, "gstiling-fix"),
    "an activation it does not take": (lambda: _edited(lambda g: _replace(g, "conv3", attrs={
        **g.ops["conv3"].attrs, "nonlinear": "HSWISH"})), accel.UnsupportedError, "HSWISH"),
    "a leaky slope not the DPU's": (lambda: _edited(lambda g: _replace(g, "dw", attrs={
        **g.ops["dw"].attrs, "LEAKYRELU_alpha": 0.2})), accel.UnsupportedError, "LEAKYRELU_alpha 0.2"),
    "another DPU family": (lambda: _edited(lambda g: _dpu(g).attrs.update(dpu_name="DPUCV2DX8G_ISA1_C20B14")),
                           accel.UnsupportedError, "DPUCV2DX8G"),
    "two DPU subgraphs": (lambda: _edited(lambda g: g.root.children.append(
        xir.Subgraph("subgraph_second", dict(_dpu(g).attrs), []))), accel.UnsupportedError,
        "2 DPU subgraphs .*'subgraph_second'"),
    "no DPU subgraph": (lambda: _edited(lambda g: _dpu(g).attrs.update(device="CPU")), accel.ModelFormatError,
                        "no DPU subgraph"),
    "a kernel of three": (lambda: _edited(lambda g: _replace(g, "conv1", attrs={**g.ops["conv1"].attrs,
                                                                                 "kernel": [3, 3, 3]})),
                          accel.ModelFormatError, "'kernel' is \\[3, 3, 3\\], not 2 ints"),
    "a fix point as a string": (lambda: _edited(lambda g: _replace(g, "conv3", output=xir.Tensor(
        "conv3_fix", (1, 4, 4, 4), "XINT", 8, {"fix_point": "2"}))), accel.ModelFormatError, "'fix_point' is a str"),
    "a zero dim": (lambda: _edited(lambda g: _replace(g, "conv3", output=xir.Tensor(
        "conv3_fix", (1, 0, 4, 4), "XINT", 8, {"fix_point": 2}))), accel.ModelFormatError, "shape \\[1, 0, 4, 4\\]"),
}


@pytest.mark.parametrize("case", sorted(BAD_FILES))
def test_a_bad_file_is_refused_saying_what_is_wrong(tmp_path, dpu_device, case):
    make, error, message = BAD_FILES[case]
    with pytest.raises(error, match=message):
        _load(tmp_path, dpu_device, make())
    b, _ = _network(np.random.default_rng(0))
    _load(tmp_path, dpu_device, b.bytes())


@pytest.mark.parametrize("finer", [1, 3])
@pytest.mark.parametrize("fy", [2, 7])  # shift_cut 5, and 0 (the bias then rounds half up, not floored)
@pytest.mark.parametrize("act", ["NONE", "RELU"])
def test_a_bias_finer_than_the_sum_is_added_as_vart_adds_it(dpu_device, tmp_path, finer, fy, act):
    """vai_c_xir writes biases whose fix point is finer than the input's plus the weights' (shift_bias < 0; the
    public MobileNetV2 of LogicTronix/Vitis-AI-Reference-Tutorials has one). VART's conv2d-fix adds such a bias
    exactly and rounds once: y = DPU_ROUND((acc + bias * 2^shift_bias) / 2^shift_cut), here in exact integers."""
    rng = np.random.default_rng(fy * 10 + finer)
    fx, fw = 3, 4
    fb = fx + fw + finer
    w = rng.integers(-60, 60, (6, 3, 3, 4))
    bias = rng.integers(-128, 128, 6)
    b = XmodelBuilder("finer_bias")
    x = b.input("x", (1, 6, 6, 4), fx)
    y = b.op("conv2d-fix", "conv", {"input": [x], "weights": [b.const("w", w, fw)], "bias": [b.const("b", bias, fb)]},
             (1, 6, 6, 6), fy, kernel=[3, 3], stride=[1, 1], pad=[1, 1, 1, 1], nonlinear=act)
    b.output(y)
    path = tmp_path / "finer.xmodel"
    path.write_bytes(b.bytes())
    xs = rng.integers(-128, 128, (1, 6, 6, 4)).astype(np.int8)
    got = dpu_device.load(str(path)).run(xs)[0]
    from models.fixed_point import conv_sum
    acc = conv_sum(xs.transpose(0, 3, 1, 2), w.transpose(0, 3, 1, 2), pad=1)
    exact = (acc << finer) + bias[None, :, None, None]          # the sum at the bias's fix point, exactly
    shift = fx + fw + finer - fy
    if act == "RELU":
        exact = np.maximum(exact, 0)
    want = sat8((exact + (1 << (shift - 1))) >> shift).transpose(0, 2, 3, 1)
    assert count_differing(f"a bias {finer} bits finer, {act}", got, want) == 0


def test_a_nearest_upsample_copies_the_integers(dpu_device, tmp_path):
    """upsample-fix NEAREST (yolov5n's, vai_c_xir's form: scale [2.0, 2.0], no align_corners or half pixel)."""
    rng = np.random.default_rng(3)
    b = XmodelBuilder("upsample")
    x = b.input("x", (1, 3, 5, 4), 5)
    up = b.op("upsample-fix", "up", {"input": [x], "size": []}, (1, 6, 10, 4), 5, mode="NEAREST", scale=[2.0, 2.0],
              align_corners=False, half_pixel_centers=False)
    b.output(up)
    path = tmp_path / "up.xmodel"
    path.write_bytes(b.bytes())
    xs = rng.integers(-128, 128, (1, 3, 5, 4)).astype(np.int8)
    got = dpu_device.load(str(path)).run(xs)[0]
    assert count_differing("a nearest upsample", got, xs.repeat(2, axis=1).repeat(2, axis=2)) == 0


def test_a_hard_sigmoid_is_the_dpus(dpu_device, tmp_path):
    """hard-sigmoid-fix as vai_c_xir writes it (tf2_custom_op's: hsigmoid_in 2, shift_hsigmoid 9, output fix
    point 7): (x * 2731 + 3 * 2731 * 2^2) / 2^9, rounded half up once, on every int8 input."""
    b = XmodelBuilder("hsig")
    x = b.input("x", (1, 1, 256, 1), 2)
    y = b.op("hard-sigmoid-fix", "hsig", {"input": [x]}, (1, 1, 256, 1), 7, hsigmoid_in=2, shift_hsigmoid=9)
    b.output(y)
    path = tmp_path / "hsig.xmodel"
    path.write_bytes(b.bytes())
    xs = np.arange(-128, 128, dtype=np.int8).reshape(1, 1, 256, 1)
    got = dpu_device.load(str(path)).run(xs)[0]
    v = np.maximum(xs.astype(np.int64) * 2731 + 3 * 2731 * 4, 0)
    want = sat8((v + 256) >> 9)
    assert count_differing("hard-sigmoid-fix on every int8", got, want) == 0


def test_accel_info_describes_the_file(tmp_path, capsys):
    """`accel info net.xmodel`: the graph, its subgraphs by device, the DPU's target and fingerprint, and the DPU
    subgraph's tensors as the runner gives them (the model's own, in name order)."""
    import json

    from accel import cli

    b, _ = _network(np.random.default_rng(0))
    path = tmp_path / "net.xmodel"
    path.write_bytes(b.bytes())
    assert cli.main(["info", str(path), "--json"]) == 0
    facts = json.loads(capsys.readouterr().out)
    assert facts["graph"] == "xmodel_test_net" and facts["ops"] == len(b.ops)
    dpu = [s for s in facts["subgraphs"] if s["device"] == "DPU"]
    assert [s["device"] for s in facts["subgraphs"]] == ["USER", "DPU", "CPU", "CPU"]
    assert dpu[0]["target"] == "DPUCZDX8G_ISA1_B4096" and dpu[0]["fingerprint"] == "0x0101000056010407"
    assert dpu[0]["inputs"] == [f"x [1, 8, 8, 3] xint8 fix_point {FX}"]
    assert dpu[0]["outputs"] == [f"add_fix_download [1, 4, 4, 8] xint8 fix_point {FA}",
                                 f"flat_fix_download [1, 48] xint8 fix_point {FP}"]
    assert cli.main(["info", str(path)]) == 0
    assert "target: DPUCZDX8G_ISA1_B4096" in capsys.readouterr().out
    (tmp_path / "x.npy").write_bytes(b"\x93NUMPY")
    with pytest.raises(SystemExit) as stop:  # a usage error, as argparse's
        cli.main(["info", str(tmp_path / "x.npy")])
    assert stop.value.code == 2 and "describes Vitis AI .xmodel" in capsys.readouterr().err


def test_a_file_with_two_dpu_subgraphs_runs_each_by_name(dpu_device, tmp_path):
    """As Xilinx's tf2_custom_op and pointpillars examples: two DPU subgraphs (a CPU op between them). Each runs by
    name, with its own tensors; the two in turn give what the one subgraph gives."""
    rng = np.random.default_rng(4)
    b, _ = _network(rng)
    g = b.graph()
    dpu = next(c for c in g.root.children if c.device == "DPU")
    cut = next(i for i, leaf in enumerate(dpu.children) if leaf.leaf_ops == ["pool"]) + 1
    first = xir.Subgraph("subgraph_first", dict(dpu.attrs), [], dpu.children[:cut])
    second = xir.Subgraph("subgraph_second", dict(dpu.attrs), [], dpu.children[cut:])
    at = g.root.children.index(dpu)
    g.root.children[at:at + 1] = [first, second]
    two = tmp_path / "two.xmodel"
    two.write_bytes(xir.write(g))
    one = tmp_path / "one.xmodel"
    one.write_bytes(b.bytes())

    with pytest.raises(accel.UnsupportedError, match=r"2 DPU subgraphs .*subgraph="):
        dpu_device.load(str(two))
    with pytest.raises(accel.InvalidArgumentError,
                       match="no DPU subgraph 'third'; its DPU subgraphs: 'subgraph_first'"):
        dpu_device.load(str(two), subgraph="third")
    head = dpu_device.load(str(two), subgraph="subgraph_first")
    tail = dpu_device.load(str(two), subgraph="subgraph_second")
    assert [t.name for t in head.outputs] == ["pool_fix"] and [t.name for t in tail.inputs] == ["pool_fix"]
    x = rng.integers(-128, 128, (1, 8, 8, 3)).astype(np.int8)
    whole = dpu_device.load(str(one)).run(x)
    (pooled,) = head.run(x)
    for a, w in zip(tail.run(pooled), whole):
        assert count_differing("two subgraphs in turn against one", a, w) == 0


def test_subgraph_applies_to_xmodel_files_only(dpu_device, tiny_path):
    with pytest.raises(accel.InvalidArgumentError, match=r"subgraph applies to .* is ONNX"):
        dpu_device.load(tiny_path, subgraph="x")
    with pytest.raises(TypeError, match="subgraph must be a str"):
        dpu_device.load(tiny_path, subgraph=1)


@pytest.mark.parametrize("kernel, stride, pad", [(2, 2, 0), (4, 4, 0), (3, 2, 1), (3, 1, 1)])
@pytest.mark.parametrize("act", ["NONE", "RELU"])
def test_a_transposed_convolution_is_vart_s(dpu_device, tmp_path, kernel, stride, pad, act):
    """transposed-conv2d-fix as VART computes it (pointpillars' 2x2/2 and 4x4/4): the input dilated by the stride,
    padded by kernel - 1 - pad, convolved with the weights as stored, one rounding half up; here in exact integers."""
    rng = np.random.default_rng(kernel * 10 + stride + pad)
    fx, fw, fb, fy = 3, 6, 7, 4
    cin, cout, hw = 5, 6, 4
    w = rng.integers(-100, 100, (cout, kernel, kernel, cin))
    bias = rng.integers(-100, 100, cout)
    out = stride * (hw - 1) + kernel - 2 * pad
    b = XmodelBuilder("tconv")
    x = b.input("x", (1, hw, hw, cin), fx)
    y = b.op("transposed-conv2d-fix", "tconv", {"input": [x], "weights": [b.const("w", w, fw)],
                                                "bias": [b.const("b", bias, fb)]},
             (1, out, out, cout), fy, kernel=[kernel, kernel], stride=[stride, stride], pad=[pad] * 4, nonlinear=act)
    b.output(y)
    path = tmp_path / "tconv.xmodel"
    path.write_bytes(b.bytes())
    xs = rng.integers(-128, 128, (1, hw, hw, cin)).astype(np.int8)
    got = dpu_device.load(str(path)).run(xs)[0]
    from models.fixed_point import conv_sum
    dilated = np.zeros((1, cin, stride * (hw - 1) + 1, stride * (hw - 1) + 1), np.int64)
    dilated[:, :, ::stride, ::stride] = xs.transpose(0, 3, 1, 2)
    edge = kernel - 1 - pad
    padded = np.pad(dilated, ((0, 0), (0, 0), (edge, edge), (edge, edge)))
    acc = conv_sum(padded, w.transpose(0, 3, 1, 2)) + (bias[None, :, None, None] << (fx + fw - fb))
    if act == "RELU":
        acc = np.maximum(acc, 0)
    shift = fx + fw - fy
    want = sat8((acc + (1 << (shift - 1))) >> shift).transpose(0, 2, 3, 1)
    assert got.shape == want.shape
    assert count_differing(f"transposed conv {kernel}x{kernel}/{stride} pad {pad} {act}", got, want) == 0
