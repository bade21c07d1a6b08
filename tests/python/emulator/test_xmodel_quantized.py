"""The quantizer's .xmodel (vai_q's *_int.xmodel: float ops, fix ops, float weights on their grid) on the emulator:
folded as vai_c_xir folds it into the DPU's ops, it computes bit for bit what the compiled file computes (the numpy
reference of the fix ops, tests/models/fixed_point.py), and `accel compare` holds the two layer by layer, naming the
first layer where a compiled file departs. What the fold cannot take as the DPU computes it is refused by name."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import accel
from accel.compiler import xir
from accel.compiler.xir.fold import HARD_SIGMOID_SCALE, dpu_avg_coefficient

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from models.device_qdq import count_differing
from models.fixed_point import avg_coef
from models.xmodel_builder import QuantizerBuilder, XmodelBuilder
from test_xmodel import FA, FB1, FC, FD, FP, FW1, FWD, FX, F1, _network, _reference

DEVICE = "emu:int8=dpu"


def _quantized(p, tail: bool = False) -> QuantizerBuilder:
    """test_xmodel's network as the quantizer writes it, its fix tensors named as the compiled file's; with `tail`,
    a softmax after the reshape's fix (the CPU's, which the DPU part leaves)."""
    q = QuantizerBuilder("xmodel_test_net")
    x = q.input("x", (1, 8, 8, 3), FX)
    w1, b1 = q.const("w1", p["w1"], FW1), q.const("b1", p["b1"], FB1)
    conv = dict(stride=[1, 1], dilation=[1, 1], pad_mode="FLOOR")
    c1 = q.op("conv2d", "conv1", {"input": [x], "weights": [w1], "bias": [b1]}, (1, 8, 8, 8), kernel=[3, 3],
              pad=[1, 1, 1, 1], group=1, **conv)
    r1 = q.fix(q.op("relu", "conv1_relu", {"input": [c1]}, (1, 8, 8, 8)), F1, "conv1_fix")
    pool = q.fix(q.op("maxpool2d", "pool", {"input": [r1]}, (1, 4, 4, 8), kernel=[2, 2], stride=[2, 2],
                      pad=[0, 0, 0, 0], pad_mode="FLOOR"), F1)
    wd = q.const("wd", p["wd"], FWD)
    d = q.op("depthwise-conv2d", "dw", {"input": [pool], "weights": [wd]}, (1, 4, 4, 8), kernel=[3, 3],
             pad=[1, 1, 1, 1], **conv)
    dl = q.fix(q.op("leaky-relu", "dw_leaky", {"input": [d]}, (1, 4, 4, 8), alpha=26 / 256), FD, "dw_fix")
    s = q.op("add", "add_sum", {"input": [pool, dl]}, (1, 4, 4, 8))
    add = q.fix(q.op("relu", "add_relu", {"input": [s]}, (1, 4, 4, 8)), FA, "add_fix")
    w3 = q.const("w3", p["w3"], 6)
    c3 = q.fix(q.op("conv2d", "conv3", {"input": [add], "weights": [w3]}, (1, 4, 4, 4), kernel=[1, 1],
                    pad=[0, 0, 0, 0], **conv), FC)
    cat = q.fix(q.op("concat", "cat", {"input": [add, c3]}, (1, 4, 4, 12), axis=3), FA)
    avg = q.op("avgpool2d", "avg_i0", {"input": [cat]}, (1, 2, 2, 12), kernel=[2, 2], stride=[2, 2],
               pad=[0, 0, 0, 0], pad_mode="FLOOR", count_include_pad=True)
    k = q.const("avg_i1", np.float32([1.0]))  # 2x2: the DPU's 1/4 exactly, which vai_q still multiplies by
    avg = q.fix(q.op("mul", "avg", {"input": [avg, k]}, (1, 2, 2, 12)), FP)
    flat = q.fix(q.op("reshape", "flat", {"input": [avg]}, (1, 48), shape=[1, 48]), FP)
    if tail:
        q.op("softmax", "probabilities", {"input": [flat]}, (1, 48), axis=-1)
    return q


@pytest.fixture(scope="module")
def dpu_device():
    with accel.open(DEVICE) as dev:
        yield dev


@pytest.mark.parametrize("tail", [False, True])
def test_the_quantizers_model_runs_as_the_dpu_computes(tmp_path, dpu_device, tail):
    rng = np.random.default_rng(3)
    _, p = _network(rng)
    path = tmp_path / "net_int.xmodel"
    path.write_bytes(_quantized(p, tail).bytes())
    model = dpu_device.load(str(path), extra_outputs=["add_fix"])
    assert [i.name for i in model.inputs] == ["x"]
    # The DPU part's output (the tensor no op of it reads), named as a compiled file names it, then the extra one;
    # the softmax is the CPU's, not run.
    assert [o.name for o in model.outputs] == ["flat_fix", "add_fix"]
    x = rng.integers(-128, 128, (1, 8, 8, 3)).astype(np.int8)
    got = dict(zip((o.name for o in model.outputs), model.run(x)))
    want, ties = _reference(x, p)
    assert ties > 0
    assert count_differing("the reshaped average pool", got["flat_fix"], want[0]) == 0
    assert count_differing("the add", got["add_fix"], want[1]) == 0


def test_compare_holds_the_quantizers_model_against_the_compiled_one(tmp_path):
    rng = np.random.default_rng(4)
    compiled, p = _network(rng)
    (tmp_path / "net.xmodel").write_bytes(compiled.bytes())
    (tmp_path / "net_int.xmodel").write_bytes(_quantized(p).bytes())
    same = accel.compare(tmp_path / "net_int.xmodel", tmp_path / "net.xmodel", device=DEVICE, random=2)
    rows = {r.tensor: r for r in same}
    # Every tensor the DPU writes, paired by name, in graph order: none differs.
    assert list(rows) == ["x", "conv1_fix", "pool_fix", "dw_fix", "add_fix", "conv3_fix", "cat_fix", "avg_fix",
                          "flat_fix"]
    assert all(r.differing == 0 for r in same), same

    # A compiled file whose depthwise weights vai_c_xir changed in one place: the first row that departs is its.
    edited = dict(p, wd=p["wd"].copy())
    edited["wd"][0, 1, 1, 2] += 9
    other, _ = _network(np.random.default_rng(4), params=edited)
    (tmp_path / "edited.xmodel").write_bytes(other.bytes())
    diff = accel.compare(tmp_path / "net_int.xmodel", tmp_path / "edited.xmodel", device=DEVICE, random=2)
    departing = [r.tensor for r in diff if r.differing]
    print("\n" + diff.table())
    assert departing[0] == "dw_fix"
    assert all(r.differing == 0 for r in diff[:3])


def test_extra_outputs_name_the_tensors_the_dpu_writes(tmp_path, dpu_device):
    rng = np.random.default_rng(5)
    compiled, _ = _network(rng)
    path = tmp_path / "net.xmodel"
    path.write_bytes(compiled.bytes())
    model = dpu_device.load(str(path), extra_outputs=["pool_fix", "cat_fix"])
    assert [o.name for o in model.outputs][-2:] == ["pool_fix", "cat_fix"]
    assert [tuple(o.shape) for o in model.outputs][-2:] == [(1, 4, 4, 8), (1, 4, 4, 12)]  # NHWC, as stored
    x = rng.integers(-128, 128, (1, 8, 8, 3)).astype(np.int8)
    outs = model.run(x)
    # The concat's first 8 channels are the add's, which is an output too: the same integers, in the same layout.
    add = outs[[o.name for o in model.outputs].index("add_fix_download")]  # the add as its download gives it
    assert np.array_equal(outs[-1][..., :8], add)
    with pytest.raises(accel.InvalidArgumentError, match="computes no tensor 'nope'"):
        dpu_device.load(str(path), extra_outputs=["nope"])
    with pytest.raises(accel.InvalidArgumentError, match="input_shapes applies to ONNX models only"):
        dpu_device.load(str(path), input_shapes={"x": (1, 8, 8, 3)})


def test_the_dpu_average_coefficient_is_the_emulators():
    for kh in range(1, 17):
        for kw in range(1, 17):
            assert dpu_avg_coefficient(kh, kw) == tuple(avg_coef(kh, kw)), (kh, kw)


def _scaled_pair(kind: str, factor: float, kernel: int = 3):
    """(quantizer bytes, compiled bytes) of one average pool (kernel x kernel, stride 1) or hard sigmoid on an
    8x8x4 input, the quantizer's times `factor`."""
    q, c = QuantizerBuilder("scaled"), XmodelBuilder("scaled")
    fx, fy = 5, 4
    x, cx = q.input("x", (1, 8, 8, 4), fx), c.input("x", (1, 8, 8, 4), fx)
    if kind == "avg":
        out = (1, 9 - kernel, 9 - kernel, 4)
        window = dict(kernel=[kernel, kernel], stride=[1, 1], pad=[0, 0, 0, 0])
        y = q.op("avgpool2d", "y_i0", {"input": [x]}, out, pad_mode="FLOOR", **window)
        cy = c.op("pool-fix", "y", {"input": [cx]}, out, fy, type="AVG", **window)
    else:
        out = (1, 8, 8, 4)
        y = q.op("hard-sigmoid", "y_i0", {"input": [x]}, out)
        cy = c.op("hard-sigmoid-fix", "y", {"input": [cx]}, out, fy, hsigmoid_in=fx, shift_hsigmoid=14 + fx - fy)
    k = q.const("y_i1", np.float32([factor]))
    q.fix(q.op("mul", "y", {"input": [y, k]}, out), fy)
    c.output(cy)
    return q.bytes(), c.bytes()


@pytest.mark.parametrize("kind, factor", [("avg", 9 * 7 / 64), ("hsigmoid", HARD_SIGMOID_SCALE)])
def test_the_dpus_scaling_written_as_a_mul_folds_into_its_op(tmp_path, dpu_device, kind, factor):
    quantized, compiled = _scaled_pair(kind, factor)
    (tmp_path / "q.xmodel").write_bytes(quantized)
    (tmp_path / "c.xmodel").write_bytes(compiled)
    mq, mc = dpu_device.load(str(tmp_path / "q.xmodel")), dpu_device.load(str(tmp_path / "c.xmodel"))
    x = np.random.default_rng(6).integers(-128, 128, (1, 8, 8, 4)).astype(np.int8)
    assert count_differing(f"the quantizer's {kind} against the compiled one", mq.run(x)[0], mc.run(x)[0]) == 0


def test_a_same_padded_convolution_pads_as_tensorflow_does(tmp_path, dpu_device):
    """pad_mode SAME (vai_q_tensorflow2's): the padding TensorFlow places, the odd one at the end; against the
    compiled form with that pad written out."""
    rng = np.random.default_rng(9)
    w = rng.integers(-50, 50, (4, 4, 4, 2))
    q, c = QuantizerBuilder("same"), XmodelBuilder("same")
    x, cx = q.input("x", (1, 7, 7, 2), 4), c.input("x", (1, 7, 7, 2), 4)
    conv = dict(kernel=[4, 4], stride=[2, 2], dilation=[1, 1])
    q.fix(q.op("conv2d", "y", {"input": [x], "weights": [q.const("w", w, 6)]}, (1, 4, 4, 4), pad_mode="SAME",
               **conv), 3)
    c.output(c.op("conv2d-fix", "y", {"input": [cx], "weights": [c.const("w", w, 6)]}, (1, 4, 4, 4), 3,
                  pad=[1, 2, 1, 2], nonlinear="NONE", **conv))
    (tmp_path / "q.xmodel").write_bytes(q.bytes())
    (tmp_path / "c.xmodel").write_bytes(c.bytes())
    xs = rng.integers(-128, 128, (1, 7, 7, 2)).astype(np.int8)
    got, want = (dpu_device.load(str(tmp_path / f)).run(xs)[0] for f in ("q.xmodel", "c.xmodel"))
    assert count_differing("SAME against pad [1, 2, 1, 2]", got, want) == 0


def _refused(tmp_path, data: bytes) -> str:
    path = tmp_path / "bad_int.xmodel"
    path.write_bytes(data)
    with accel.open(DEVICE) as dev, pytest.raises((accel.UnsupportedError, accel.ModelFormatError)) as e:
        dev.load(str(path))
    return str(e.value)


def test_what_the_dpu_would_not_compute_is_refused_by_name(tmp_path):
    p = _network(np.random.default_rng(7))[1]
    assert "is multiplied by 1.0, not by the DPU's 0.984375" in _refused(tmp_path, _scaled_pair("avg", 1.0)[0])

    def edited(**fix_attrs):
        q = _quantized(p)
        op = q.ops["pool_fix"]
        q.ops["pool_fix"] = xir.Op(op.name, op.type, {**op.attrs, **fix_attrs}, op.inputs, op.output)
        return q.bytes()

    assert "round_mode 'STD_ROUND'" in _refused(tmp_path, edited(round_mode="STD_ROUND"))
    assert "bit_width 16" in _refused(tmp_path, edited(bit_width=16))

    q = _quantized(p)
    leaky = q.ops["dw_leaky"]
    q.ops["dw_leaky"] = xir.Op(leaky.name, leaky.type, {"alpha": 0.1}, leaky.inputs, leaky.output)
    assert "'dw_leaky' (leaky-relu)" in _refused(tmp_path, q.bytes()) and "26/256" in _refused(tmp_path, q.bytes())

    q = _quantized(p)  # the conv's float sum read by a second op: the DPU keeps no float value between its ops
    q.op("sigmoid", "peek", {"input": ["conv1"]}, (1, 8, 8, 8))
    assert "'conv1' (conv2d)" in _refused(tmp_path, q.bytes()) and "'peek'" in _refused(tmp_path, q.bytes())

    q = _quantized(p)  # weights no fix quantizes
    conv = q.ops["conv3"]
    raw = q.const("w3_float", p["w3"].astype(np.float32) / 64)
    q.ops["conv3"] = xir.Op(conv.name, conv.type, conv.attrs, {**conv.inputs, "weights": [raw]}, conv.output)
    assert "which no fix op quantizes" in _refused(tmp_path, q.bytes())


def test_accel_info_describes_the_quantizers_model(tmp_path, capsys):
    from accel import cli

    p = _network(np.random.default_rng(8))[1]
    path = tmp_path / "net_int.xmodel"
    path.write_bytes(_quantized(p, tail=True).bytes())
    assert cli.main(["info", str(path)]) == 0
    out = capsys.readouterr().out
    assert "the quantizer's" in out and "probabilities" in out and "flat_fix" in out
