"""The float kernels' code paths (ACCEL_EMU_ISA caps the path a load picks: portable, avx2, avx512 for
avx512vnni and amx) each give onnxruntime's answer on the catalog's CNNs, so a CPU without AVX-512 runs
tested code. Each run checks, from the device's name, that the path under test is the one loads pick."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import onnxruntime as ort
import pytest

import accel
from accel import compiler

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from models import catalog
from test_threads_intra import assert_bit_identical, runs_by_threads

pytestmark = pytest.mark.emulator

CAPS = {"portable": "portable", "avx2": "avx2", "avx512": "avx512vnni"}  # float path -> ACCEL_EMU_ISA
REL_TOL = 1e-4


def float_path(monkeypatch, cap: str) -> str:
    monkeypatch.setenv("ACCEL_EMU_ISA", cap)
    with accel.open("emu") as d:
        name = d.info.name
    return name.split("float: ", 1)[1].split(",", 1)[0]


def available(monkeypatch) -> list:
    return [path for path, cap in CAPS.items() if float_path(monkeypatch, cap) == path]


def test_the_portable_path_is_always_there(monkeypatch):
    assert available(monkeypatch)[0] == "portable"


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    return tmp_path_factory.mktemp("float_paths")


@pytest.mark.parametrize("name", ["resnet18", "mobilenetv2", "yolo", "ppocr_cls"])
def test_every_path_gives_onnxruntimes_answer(monkeypatch, built, name):
    spec = catalog.MODELS[name]
    path = catalog.model_path(name, built if spec.build else None)
    x = spec.make_input(spec.test_shape)
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    want = ort.InferenceSession(str(path), opts, providers=["CPUExecutionProvider"]).run(None, {spec.input_name: x})
    accm = compiler.compile_model(str(path), {spec.input_name: spec.test_shape})
    paths = available(monkeypatch)
    for fpath in paths:
        monkeypatch.setenv("ACCEL_EMU_ISA", CAPS[fpath])
        with accel.open("emu:cores=1") as d:
            assert f"float: {fpath}," in d.info.name, d.info.name
            got = d.load(accm).run(x)
        for i, (g, w) in enumerate(zip(got, want)):
            err = float(np.max(np.abs(np.asarray(g) - w)))
            bound = REL_TOL * float(np.max(np.abs(w)))
            print(f"{name} output {i} on {fpath}: max abs error {err:.3g} (bound {bound:.3g})")
            assert err <= bound, f"{name} output {i} on the {fpath} path: max abs error {err:.3g} > {bound:.3g}"
    print(f"{name}: paths {', '.join(paths)}")


# Conv geometries: every kernel size, stride and padding the float paths treat apart (stride phases, row
# kernel interiors and edges, im2col panels, planes narrower than a vector or than the kernel, bands of
# output rows and blocks of depth, channel counts off the register tile), with and without bias and with a
# fused activation of each kind; depthwise convs (group == channels) and the others.
CONVS = [
    # c, m, group, h, w, (kh, kw), (sh, sw), (top, left, bottom, right), dilation, bias, activation
    (3, 3, 3, 7, 7, (3, 3), (1, 1), (1, 1, 1, 1), 1, True, "Relu"),
    (5, 5, 5, 14, 14, (3, 3), (2, 2), (1, 1, 1, 1), 1, True, "Clip"),
    (17, 17, 17, 9, 33, (5, 5), (1, 1), (2, 2, 2, 2), 1, True, "HardSwish"),
    (4, 4, 4, 12, 40, (5, 5), (2, 1), (2, 2, 2, 2), 1, False, ""),
    (6, 6, 6, 11, 37, (3, 3), (1, 2), (1, 0, 0, 1), 1, True, "Relu"),
    (2, 2, 2, 1, 1, (3, 3), (1, 1), (1, 1, 1, 1), 1, True, ""),
    (3, 3, 3, 2, 3, (5, 5), (2, 2), (2, 2, 2, 2), 1, True, "Relu"),
    (8, 8, 8, 20, 18, (7, 7), (2, 2), (3, 3, 3, 3), 1, True, "HardSwish"),
    (3, 3, 3, 16, 16, (2, 2), (2, 2), (0, 0, 0, 0), 1, True, ""),
    (3, 3, 3, 10, 10, (4, 3), (1, 2), (0, 1, 3, 2), 1, True, "Clip"),
    (4, 4, 4, 13, 13, (3, 3), (1, 1), (2, 2, 2, 2), 2, True, "Relu"),
    (2, 2, 2, 15, 15, (1, 1), (2, 2), (0, 0, 0, 0), 1, True, ""),
    (2, 2, 2, 170, 170, (3, 3), (1, 1), (1, 1, 1, 1), 1, True, "Relu"),
    (2, 2, 2, 170, 170, (3, 3), (2, 2), (1, 1, 1, 1), 1, True, ""),
    (2, 2, 2, 170, 171, (5, 5), (2, 2), (2, 2, 2, 2), 1, True, "HardSwish"),
    (3, 13, 1, 45, 47, (7, 7), (2, 2), (3, 3, 3, 3), 1, True, "Relu"),
    (96, 21, 1, 37, 41, (3, 3), (1, 1), (1, 1, 1, 1), 1, True, ""),
    (40, 24, 2, 9, 11, (3, 3), (2, 2), (1, 0, 1, 2), 1, False, "HardSwish"),
    (64, 9, 1, 15, 15, (1, 1), (2, 2), (0, 0, 0, 0), 1, True, ""),
    (32, 16, 1, 8, 30, (1, 3), (1, 1), (0, 1, 0, 1), 1, True, "Relu"),
    (16, 8, 1, 12, 12, (3, 3), (3, 3), (1, 1, 1, 1), 1, True, ""),
    (16, 8, 1, 12, 12, (3, 3), (1, 1), (2, 2, 2, 2), 2, True, "Clip"),
    (300, 8, 1, 6, 6, (3, 3), (1, 1), (1, 1, 1, 1), 1, True, ""),
    (8, 40, 1, 64, 64, (3, 3), (1, 1), (1, 1, 1, 1), 1, True, "Relu"),
    # The packed conv GEMM's edges on the AVX2 path (a tile of 4 rows by 24 columns, two per 8-row weight
    # panel and per 48-column B panel): last panels of 1, 4 and 5 rows, last column runs of 1..23 and 25..47,
    # read in place (1x1), over stride phases (strides 1 and 2), as im2col panels (dilated at strides 1 and
    # 2, stride 3), depth split in blocks (K = 360), groups.
    (24, 13, 1, 11, 13, (1, 1), (1, 1), (0, 0, 0, 0), 1, True, "Relu"),
    (16, 20, 1, 9, 7, (1, 1), (1, 1), (0, 0, 0, 0), 1, False, ""),
    (32, 24, 1, 14, 14, (1, 1), (2, 2), (0, 0, 0, 0), 1, True, "Relu"),
    (12, 36, 3, 19, 23, (3, 3), (2, 2), (1, 1, 1, 1), 1, True, "Clip"),
    (8, 10, 2, 17, 29, (3, 3), (1, 1), (1, 1, 1, 1), 1, True, "HardSwish"),
    (40, 17, 1, 13, 9, (3, 3), (1, 1), (0, 0, 0, 0), 1, True, ""),
    (10, 7, 1, 21, 21, (3, 3), (1, 1), (2, 2, 2, 2), 2, True, "Relu"),
    (6, 11, 1, 25, 26, (3, 3), (3, 3), (1, 1, 1, 1), 1, True, ""),
    (3, 12, 1, 33, 35, (5, 5), (2, 2), (2, 1, 2, 1), 1, False, "Relu"),
    (12, 10, 1, 23, 27, (3, 3), (2, 2), (2, 1, 2, 3), 2, True, "Relu"),
    (9, 6, 1, 30, 70, (3, 5), (1, 1), (0, 4, 1, 0), 3, False, "Clip"),
]


def conv_model(c, m, group, h, w, k, s, pads, dil, bias, act, rng):
    from onnx import TensorProto, helper, numpy_helper

    inits = [numpy_helper.from_array(rng.standard_normal((m, c // group, *k)).astype(np.float32), "w")]
    ins = ["x", "w"]
    if bias:
        inits.append(numpy_helper.from_array(rng.standard_normal(m).astype(np.float32), "b"))
        ins.append("b")
    conv_out = "y" if not act else "c"
    nodes = [helper.make_node("Conv", ins, [conv_out], group=group, kernel_shape=list(k), strides=list(s),
                              pads=[pads[0], pads[1], pads[2], pads[3]], dilations=[dil, dil])]
    if act == "Clip":
        inits += [numpy_helper.from_array(np.float32(0), "lo"), numpy_helper.from_array(np.float32(6), "hi")]
        nodes.append(helper.make_node("Clip", ["c", "lo", "hi"], ["y"]))
    elif act:
        nodes.append(helper.make_node(act, ["c"], ["y"]))
    graph = helper.make_graph(nodes, "conv", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, c, h, w])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def conv_id(g) -> str:
    c, m, group, h, w, k, s, pads, dil, bias, act = g
    kind = "dw" if group == c == m else f"{c}to{m}g{group}"
    return "{}_{}x{}_k{}_s{}_p{}_d{}_{}{}".format(kind, h, w, "x".join(map(str, k)), "x".join(map(str, s)),
                                                 "".join(map(str, pads)), dil, "b" if bias else "nob",
                                                 "_" + act if act else "")


@pytest.mark.parametrize("geom", CONVS, ids=conv_id)
def test_conv_geometries_on_every_path(monkeypatch, geom):
    rng = np.random.default_rng(7)
    proto = conv_model(*geom, rng)
    x = rng.standard_normal((1, geom[0], geom[3], geom[4])).astype(np.float32)
    want = ort.InferenceSession(proto.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    accm = compiler.compile_model(proto)
    bound = 1e-5 * np.sqrt(geom[0] // geom[2])
    portable = None
    results = {}
    for fpath in available(monkeypatch):
        monkeypatch.setenv("ACCEL_EMU_ISA", CAPS[fpath])
        with accel.open("emu:cores=1") as d:
            got = np.asarray(d.load(accm).run(x)[0])
        assert got.shape == want.shape
        results[fpath] = got
        # Against onnxruntime, and against the portable path (the first): an ISA's kernel sums in its own
        # order, so the paths agree to rounding, not bit for bit.
        portable = got if portable is None else portable
        for name, ref in (("onnxruntime", want), ("the portable path", portable)):
            err = np.abs(got - ref)
            bad = int(np.count_nonzero(err > bound * (1 + np.abs(ref))))
            same = int(np.count_nonzero(got == ref))
            print(f"{fpath} against {name}: {same} of {ref.size} identical, {bad} beyond the bound; "
                  f"max abs difference {float(err.max()):.3g}")
            assert bad == 0, f"conv {conv_id(geom)} on {fpath}: {bad} of {ref.size} elements differ from {name}"
    # The AVX2 and AVX-512 packed conv GEMMs (every conv but depthwise ones and those of fewer than 16
    # output positions) sum each output in the same order, one FMA per tap from the bias, through the same
    # blocks of depth: their results are the same bits. (So the AVX2 path is the packed GEMM, not im2col and
    # the BLAS, whose sums run in another order.)
    c, m, group = geom[:3]
    if "avx2" in results and "avx512" in results and not (group == c == m) and want.shape[2] * want.shape[3] >= 16:
        differ = int(np.count_nonzero(results["avx2"].view(np.uint32) != results["avx512"].view(np.uint32)))
        print(f"avx2 against avx512: {differ} of {want.size} elements differ")
        assert differ == 0, f"conv {conv_id(geom)}: the AVX2 and AVX-512 packed GEMMs differ in {differ} elements"


# Convs big enough to split across threads (column blocks, bands of output rows, runs of weight panels), with
# ragged channel and position counts: every path this CPU has gives the same bytes on 1, 2 and 3 threads.
THREADED_CONVS = [
    (64, 45, 1, 30, 31, (3, 3), (1, 1), (1, 1, 1, 1), 1, True, "Relu"),
    (48, 70, 1, 41, 37, (3, 3), (2, 2), (1, 1, 1, 1), 1, True, "Clip"),
    (96, 53, 1, 29, 27, (1, 1), (1, 1), (0, 0, 0, 0), 1, True, "HardSwish"),
    (64, 36, 4, 33, 30, (3, 3), (1, 1), (1, 1, 1, 1), 1, False, ""),
    (24, 29, 1, 40, 40, (3, 3), (1, 1), (2, 2, 2, 2), 2, True, "Relu"),
]


@pytest.mark.parametrize("geom", THREADED_CONVS, ids=conv_id)
def test_conv_geometries_are_bit_identical_whatever_the_thread_count(monkeypatch, geom):
    rng = np.random.default_rng(11)
    accm = compiler.compile_model(conv_model(*geom, rng))
    x = rng.standard_normal((1, geom[0], geom[3], geom[4])).astype(np.float32)
    for fpath in available(monkeypatch):
        monkeypatch.setenv("ACCEL_EMU_ISA", CAPS[fpath])
        assert_bit_identical(runs_by_threads(accm, x, threads=(1, 2, 3)), f"conv {conv_id(geom)} on {fpath}")
