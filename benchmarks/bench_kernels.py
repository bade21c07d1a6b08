"""Per-layer kernel benchmark: the emulator (emu:cores=1,threads=1) against onnxruntime (one thread), same
one-node model, interleaved round by round, printing the ratio emulator / onnxruntime per shape and the
geometric mean per model family and overall; plus the bundled tiny CNN end to end.

The shapes are the conv layers (and a few GEMMs) of ResNet-18 and MobileNetV2 at 224x224 (BatchNorm
folded, so a conv with bias and its activation), and of the PP-OCR detector (640x640), recognizer
(48x320) and direction classifier (48x192). Each runs as a one-node ONNX model (Conv + activation)
with random weights; both sides get preallocated inputs and outputs (DeviceTensors; ORT IO binding),
so neither copies a tensor per run.

Times are process CPU time (time.process_time: all threads, the emulator's core thread included;
onnxruntime with one thread runs in the caller's), which other processes on a busy machine hardly
disturb; the wall-clock ratio is printed beside it ("wall").

    python benchmarks/bench_kernels.py [--rounds 7] [--min-ms 20] [--filter mb.] [--no-e2e]

The machine is noisy: compare the ratios (each the median of per-round ratios), not the times.
"""
from __future__ import annotations

import argparse
import math
import statistics
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, List, Optional, Tuple

import numpy as np
import onnx
from onnx import TensorProto, helper

OPSET = 17
# spin=0: a waiting caller sleeps rather than polls, so that the process CPU time is the job's work.
URI = "emu:cores=1,threads=1,spin=0,pool=2G"


@dataclass(frozen=True)
class ConvShape:
    name: str
    c: int
    h: int
    w: int
    m: int
    k: Tuple[int, int] = (1, 1)
    s: Tuple[int, int] = (1, 1)
    group: int = 1
    act: str = ""  # "", "relu", "relu6", "hardswish"


@dataclass(frozen=True)
class GemmShape:
    name: str
    m: int
    k: int
    n: int


def dw(name, c, h, w, k, s=(1, 1), act="relu6"):
    return ConvShape(name, c, h, w, c, (k, k), s, c, act)


def pw(name, c, h, w, m, act=""):
    return ConvShape(name, c, h, w, m, act=act)


RESNET18 = [
    ConvShape("r18.conv1", 3, 224, 224, 64, (7, 7), (2, 2), act="relu"),
    ConvShape("r18.l1", 64, 56, 56, 64, (3, 3), act="relu"),
    ConvShape("r18.l2a", 64, 56, 56, 128, (3, 3), (2, 2), act="relu"),
    ConvShape("r18.l2ds", 64, 56, 56, 128, (1, 1), (2, 2)),
    ConvShape("r18.l2", 128, 28, 28, 128, (3, 3), act="relu"),
    ConvShape("r18.l3a", 128, 28, 28, 256, (3, 3), (2, 2), act="relu"),
    ConvShape("r18.l3ds", 128, 28, 28, 256, (1, 1), (2, 2)),
    ConvShape("r18.l3", 256, 14, 14, 256, (3, 3), act="relu"),
    ConvShape("r18.l4a", 256, 14, 14, 512, (3, 3), (2, 2), act="relu"),
    ConvShape("r18.l4ds", 256, 14, 14, 512, (1, 1), (2, 2)),
    ConvShape("r18.l4", 512, 7, 7, 512, (3, 3), act="relu"),
    GemmShape("r18.fc", 1, 512, 1000),
]

MOBILENETV2 = [
    ConvShape("mb.conv1", 3, 224, 224, 32, (3, 3), (2, 2), act="relu6"),
    dw("mb.dw1", 32, 112, 112, 3),
    pw("mb.pj1", 32, 112, 112, 16),
    pw("mb.ex2", 16, 112, 112, 96, "relu6"),
    dw("mb.dw2", 96, 112, 112, 3, (2, 2)),
    pw("mb.pj2", 96, 56, 56, 24),
    pw("mb.ex3", 24, 56, 56, 144, "relu6"),
    dw("mb.dw3", 144, 56, 56, 3),
    pw("mb.pj3", 144, 56, 56, 24),
    dw("mb.dw4", 144, 56, 56, 3, (2, 2)),
    pw("mb.pj4", 144, 28, 28, 32),
    pw("mb.ex5", 32, 28, 28, 192, "relu6"),
    dw("mb.dw5", 192, 28, 28, 3),
    pw("mb.pj5", 192, 28, 28, 32),
    dw("mb.dw6", 192, 28, 28, 3, (2, 2)),
    pw("mb.pj6", 192, 14, 14, 64),
    pw("mb.ex7", 64, 14, 14, 384, "relu6"),
    dw("mb.dw7", 384, 14, 14, 3),
    pw("mb.pj7", 384, 14, 14, 64),
    pw("mb.pj8", 384, 14, 14, 96),
    pw("mb.ex9", 96, 14, 14, 576, "relu6"),
    dw("mb.dw9", 576, 14, 14, 3),
    pw("mb.pj9", 576, 14, 14, 96),
    dw("mb.dw10", 576, 14, 14, 3, (2, 2)),
    pw("mb.pj10", 576, 7, 7, 160),
    pw("mb.ex11", 160, 7, 7, 960, "relu6"),
    dw("mb.dw11", 960, 7, 7, 3),
    pw("mb.pj11", 960, 7, 7, 160),
    pw("mb.pj12", 960, 7, 7, 320),
    pw("mb.last", 320, 7, 7, 1280, "relu6"),
    GemmShape("mb.fc", 1, 1280, 1000),
]

HS = "hardswish"
OCR_DET = [
    ConvShape("det.stem", 3, 640, 640, 16, (3, 3), (2, 2), act=HS),
    dw("det.dw16", 16, 320, 320, 3, act=HS),
    pw("det.pw16_32", 16, 320, 320, 32, HS),
    dw("det.dw32s2", 32, 320, 320, 3, (2, 2), HS),
    pw("det.pw32_48", 32, 160, 160, 48, HS),
    dw("det.dw48", 48, 160, 160, 3, act=HS),
    pw("det.pw48_48", 48, 160, 160, 48, HS),
    dw("det.dw48s2", 48, 160, 160, 3, (2, 2), HS),
    pw("det.pw48_96", 48, 80, 80, 96, HS),
    dw("det.dw96", 96, 80, 80, 3, act=HS),
    pw("det.pw96_96", 96, 80, 80, 96, HS),
    dw("det.dw96s2", 96, 80, 80, 3, (2, 2), HS),
    pw("det.pw96_192", 96, 40, 40, 192, HS),
    dw("det.dw192k5", 192, 40, 40, 5, act=HS),
    pw("det.pw192", 192, 40, 40, 192, HS),
    dw("det.dw192k5s2", 192, 40, 40, 5, (2, 2), HS),
    pw("det.pw192_384", 192, 20, 20, 384, HS),
    dw("det.dw384k5", 384, 20, 20, 5, act=HS),
    pw("det.pw384", 384, 20, 20, 384, HS),
    pw("det.pw48_12", 48, 160, 160, 12),
    pw("det.pw12_96", 12, 160, 160, 96),
    ConvShape("det.neck160", 96, 160, 160, 24, (3, 3)),
    ConvShape("det.neck80", 96, 80, 80, 24, (3, 3)),
    ConvShape("det.neck20", 96, 20, 20, 24, (3, 3)),
    pw("det.se384", 384, 1, 1, 96, "relu"),
]

OCR_REC = [
    ConvShape("rec.stem", 3, 48, 320, 16, (3, 3), (2, 2), act=HS),
    dw("rec.dw16", 16, 24, 160, 3, act=HS),
    pw("rec.pw16_32", 16, 24, 160, 32, HS),
    dw("rec.dw32", 32, 24, 160, 3, act=HS),
    pw("rec.pw32_64", 32, 24, 160, 64, HS),
    dw("rec.dw64s21", 64, 24, 160, 3, (2, 1), HS),
    pw("rec.pw64_128", 64, 12, 160, 128, HS),
    dw("rec.dw128s12", 128, 12, 160, 3, (1, 2), HS),
    pw("rec.pw128_240", 128, 12, 80, 240, HS),
    dw("rec.dw240k5", 240, 12, 80, 5, act=HS),
    pw("rec.pw240", 240, 12, 80, 240, HS),
    dw("rec.dw240k5s21", 240, 12, 80, 5, (2, 1), HS),
    pw("rec.pw240_480", 240, 6, 80, 480, HS),
    dw("rec.dw480k5", 480, 6, 80, 5, act=HS),
    pw("rec.pw480", 480, 6, 80, 480, HS),
    pw("rec.pw480_3", 480, 3, 80, 480, HS),
    ConvShape("rec.conv1x3", 480, 1, 40, 60, (1, 3), act="relu"),
    pw("rec.se480", 480, 1, 1, 120, "relu"),
    GemmShape("rec.qkv", 40, 120, 360),
    GemmShape("rec.mlp", 40, 120, 240),
    GemmShape("rec.head", 40, 120, 6625),
]

OCR_CLS = [
    ConvShape("cls.stem", 3, 48, 192, 8, (3, 3), (2, 2), act="relu"),
    dw("cls.dw8s21", 8, 24, 96, 3, (2, 1), "relu"),
    pw("cls.pw8_8", 8, 24, 96, 8, "relu"),
    dw("cls.dw32", 32, 6, 96, 3, act=HS),
    pw("cls.pw16_88", 16, 3, 96, 88, HS),
    dw("cls.dw88k5", 88, 3, 96, 5, act=HS),
    pw("cls.pw88_16", 88, 3, 96, 16),
    pw("cls.pw32_200", 32, 2, 96, 200, HS),
    dw("cls.dw200k5", 200, 2, 96, 5, act=HS),
    pw("cls.pw200_32", 200, 2, 96, 32),
]

FAMILIES = [("resnet18", RESNET18), ("mobilenetv2", MOBILENETV2), ("ppocr-det", OCR_DET),
            ("ppocr-rec", OCR_REC), ("ppocr-cls", OCR_CLS)]


def _act_nodes(act: str, x: str, y: str) -> List[onnx.NodeProto]:
    if act == "relu":
        return [helper.make_node("Relu", [x], [y])]
    if act == "relu6":
        return [helper.make_node("Clip", [x, "clip_lo", "clip_hi"], [y])]
    if act == "hardswish":
        return [helper.make_node("HardSwish", [x], [y])]
    raise ValueError(act)


def conv_model(s: ConvShape, rng: np.random.Generator) -> Tuple[onnx.ModelProto, Tuple[int, ...]]:
    kh, kw = s.k
    pads = [kh // 2, kw // 2, kh // 2, kw // 2]
    oh = (s.h + 2 * (kh // 2) - kh) // s.s[0] + 1
    ow = (s.w + 2 * (kw // 2) - kw) // s.s[1] + 1
    fan_in = s.c // s.group * kh * kw
    wt = (rng.standard_normal((s.m, s.c // s.group, kh, kw)) / math.sqrt(fan_in)).astype(np.float32)
    b = (0.1 * rng.standard_normal(s.m)).astype(np.float32)
    inits = [helper.make_tensor("w", TensorProto.FLOAT, wt.shape, wt.ravel()),
             helper.make_tensor("b", TensorProto.FLOAT, b.shape, b)]
    conv_out = "y" if not s.act else "t"
    nodes = [helper.make_node("Conv", ["x", "w", "b"], [conv_out], kernel_shape=[kh, kw], strides=list(s.s),
                              pads=pads, group=s.group)]
    if s.act:
        nodes += _act_nodes(s.act, "t", "y")
        if s.act == "relu6":
            inits += [helper.make_tensor("clip_lo", TensorProto.FLOAT, [], [0.0]),
                      helper.make_tensor("clip_hi", TensorProto.FLOAT, [], [6.0])]
    xshape = (1, s.c, s.h, s.w)
    g = helper.make_graph(nodes, s.name, [helper.make_tensor_value_info("x", TensorProto.FLOAT, xshape)],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, (1, s.m, oh, ow))], inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", OPSET)]), xshape


def gemm_model(s: GemmShape, rng: np.random.Generator) -> Tuple[onnx.ModelProto, Tuple[int, ...]]:
    wt = (rng.standard_normal((s.k, s.n)) / math.sqrt(s.k)).astype(np.float32)
    b = (0.1 * rng.standard_normal(s.n)).astype(np.float32)
    inits = [helper.make_tensor("w", TensorProto.FLOAT, wt.shape, wt.ravel()),
             helper.make_tensor("b", TensorProto.FLOAT, b.shape, b)]
    nodes = [helper.make_node("Gemm", ["x", "w", "b"], ["y"])]
    g = helper.make_graph(nodes, s.name, [helper.make_tensor_value_info("x", TensorProto.FLOAT, (s.m, s.k))],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, (s.m, s.n))], inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", OPSET)]), (s.m, s.k)


class Pair:
    """One model on both runtimes, inputs and outputs preallocated, checked against each other once."""

    def __init__(self, dev, proto: onnx.ModelProto, feeds: dict):
        import onnxruntime as ort
        from accel import compiler

        self.model = dev.load(compiler.compile_model(proto))
        self.ins = []
        for info in self.model.inputs:
            t = dev.empty(info.shape, info.dtype)
            np.asarray(t)[...] = feeds[info.name]
            self.ins.append(t)
        self.outs = [dev.empty(o.shape, o.dtype) for o in self.model.outputs]

        opts = ort.SessionOptions()
        opts.intra_op_num_threads = 1
        opts.inter_op_num_threads = 1
        self.sess = ort.InferenceSession(proto.SerializeToString(), opts, providers=["CPUExecutionProvider"])
        self.binding = self.sess.io_binding()
        for name, v in feeds.items():
            self.binding.bind_ortvalue_input(name, ort.OrtValue.ortvalue_from_numpy(v))
        self.ort_outs = []
        for o in self.sess.get_outputs():
            v = ort.OrtValue.ortvalue_from_numpy(np.empty([int(d) for d in o.shape], np.float32))
            self.binding.bind_ortvalue_output(o.name, v)
            self.ort_outs.append(v)

    def run_emu(self) -> None:
        self.model.run(self.ins, self.outs)

    def run_ort(self) -> None:
        self.sess.run_with_iobinding(self.binding)

    def max_rel_error(self) -> float:
        self.run_emu()
        self.run_ort()
        worst = 0.0
        for t, v in zip(self.outs, self.ort_outs):
            a, b = np.asarray(t), v.numpy()
            worst = max(worst, float(np.max(np.abs(a - b)) / max(float(np.max(np.abs(b))), 1e-30)))
        return worst


def calibrate(fn: Callable[[], None], min_s: float) -> int:
    """How many calls take about min_s seconds."""
    n = 1
    while True:
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        dt = time.perf_counter() - t0
        if dt >= min_s or n >= 1 << 20:
            return max(1, int(n * min_s / max(dt, 1e-9)))
        n *= 4


@dataclass
class Figures:
    emu_ms: float     # CPU time per run, median over rounds
    ort_ms: float
    ratio: float      # emulator / onnxruntime CPU time, median of the per-round ratios
    wall_ratio: float  # the same on wall-clock time


def compare(pair: Pair, rounds: int, min_s: float) -> Figures:
    """Both sides n runs at a time, interleaved for `rounds` rounds."""
    pair.run_emu(), pair.run_ort()
    n = max(calibrate(pair.run_emu, min_s / 4), calibrate(pair.run_ort, min_s / 4))
    te, to, ratios, wall = [], [], [], []
    for _ in range(rounds):
        c0, t0 = time.process_time(), time.perf_counter()
        for _ in range(n):
            pair.run_emu()
        c1, t1 = time.process_time(), time.perf_counter()
        for _ in range(n):
            pair.run_ort()
        c2, t2 = time.process_time(), time.perf_counter()
        te.append((c1 - c0) / n)
        to.append((c2 - c1) / n)
        ratios.append(te[-1] / to[-1])
        wall.append((t1 - t0) / (t2 - t1))
    return Figures(statistics.median(te) * 1e3, statistics.median(to) * 1e3, statistics.median(ratios),
                   statistics.median(wall))


def geomean(xs: List[float]) -> float:
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


def shape_text(s) -> str:
    if isinstance(s, GemmShape):
        return f"gemm {s.m}x{s.k} * {s.k}x{s.n}"
    k = f"{s.k[0]}x{s.k[1]}"
    kind = "dw" if s.group > 1 else "conv"
    st = f" s{s.s[0]}" if s.s[0] == s.s[1] else f" s{s.s[0]},{s.s[1]}"
    return f"{kind} {k}{st} {s.c}->{s.m} @{s.h}x{s.w} {s.act}".rstrip()


def flops(s) -> float:
    """Multiply-adds x 2 of one run."""
    if isinstance(s, GemmShape):
        return 2.0 * s.m * s.k * s.n
    kh, kw = s.k
    oh = (s.h + 2 * (kh // 2) - kh) // s.s[0] + 1
    ow = (s.w + 2 * (kw // 2) - kw) // s.s[1] + 1
    return 2.0 * s.m * (s.c // s.group) * kh * kw * oh * ow


def sgemm_peak(dev, rounds: int, min_s: float) -> Tuple[float, float]:
    """GFLOP/s of a 1024x1024x1024 MatMul on the emulator (the BLAS's sgemm, one thread) and onnxruntime:
    the machine's attainable float peak that the kernels are held against."""
    n = 1024
    rng = np.random.default_rng(1)
    wt = rng.standard_normal((n, n)).astype(np.float32)
    g = helper.make_graph([helper.make_node("MatMul", ["x", "w"], ["y"])], "sgemm",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, (n, n))],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, (n, n))],
                          [helper.make_tensor("w", TensorProto.FLOAT, wt.shape, wt.ravel())])
    proto = helper.make_model(g, opset_imports=[helper.make_opsetid("", OPSET)])
    f = compare(Pair(dev, proto, {"x": rng.standard_normal((n, n)).astype(np.float32)}), rounds, min_s)
    return 2.0 * n ** 3 / f.emu_ms / 1e6, 2.0 * n ** 3 / f.ort_ms / 1e6


def tiny_cnn_pair(dev) -> Pair:
    import accel

    path = Path(accel.__file__).parent / "models" / "tiny_cnn.onnx"
    proto = onnx.load(str(path))
    name = proto.graph.input[0].name
    dims = tuple(d.dim_value for d in proto.graph.input[0].type.tensor_type.shape.dim)
    x = np.random.default_rng(0).random(dims, dtype=np.float32)
    return Pair(dev, proto, {name: x})


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=7, help="interleaved rounds per shape (default 7)")
    ap.add_argument("--min-ms", type=float, default=20.0, help="time per side per round (default 20 ms)")
    ap.add_argument("--filter", default="", help="only shapes whose name contains this")
    ap.add_argument("--no-e2e", action="store_true", help="skip the tiny CNN end to end")
    args = ap.parse_args(argv)

    import accel

    rng = np.random.default_rng(0)
    min_s = args.min_ms / 1e3
    all_ratios: List[float] = []
    worst_err = 0.0
    with accel.open(URI) as dev:
        blas_peak, ort_peak = sgemm_peak(dev, args.rounds, min_s)
        peak = max(blas_peak, ort_peak)
        print(f"peak: sgemm 1024x1024x1024, one thread: {blas_peak:.0f} GFLOP/s through the emulator's BLAS, "
              f"{ort_peak:.0f} through onnxruntime; '% peak' below is a kernel's GFLOP/s against the larger")
        print(f"{'shape':16s} {'what':40s} {'emu ms':>9s} {'ort ms':>9s} {'ratio':>6s} {'wall':>6s} {'rel err':>8s}"
              f" {'emu GF/s':>8s} {'ort GF/s':>8s} {'% peak':>6s}")
        for family, shapes in FAMILIES:
            ratios = []
            for s in shapes:
                if args.filter not in s.name:
                    continue
                proto, xshape = (gemm_model if isinstance(s, GemmShape) else conv_model)(s, rng)
                pair = Pair(dev, proto, {"x": rng.standard_normal(xshape).astype(np.float32)})
                err = pair.max_rel_error()
                worst_err = max(worst_err, err)
                f = compare(pair, args.rounds, min_s)
                ratios.append(f.ratio)
                gf_emu, gf_ort = flops(s) / f.emu_ms / 1e6, flops(s) / f.ort_ms / 1e6
                print(f"{s.name:16s} {shape_text(s):40s} {f.emu_ms:9.4f} {f.ort_ms:9.4f} {f.ratio:6.2f} "
                      f"{f.wall_ratio:6.2f} {err:8.1e} {gf_emu:8.1f} {gf_ort:8.1f} {100 * gf_emu / peak:5.0f}%",
                      flush=True)
                del pair
            if ratios:
                print(f"{'':16s} {'geomean ' + family:40s} {'':9s} {'':9s} {geomean(ratios):6.2f}")
                all_ratios += ratios
        if all_ratios:
            print(f"{'':16s} {'geomean, all shapes':40s} {'':9s} {'':9s} {geomean(all_ratios):6.2f}"
                  f"   (largest relative error {worst_err:.1e})")
        if not args.no_e2e:
            pair = tiny_cnn_pair(dev)
            f = compare(pair, args.rounds, min_s)
            print(f"{'tiny_cnn':16s} {'end to end, 1x3x64x64':40s} {f.emu_ms:9.4f} {f.ort_ms:9.4f} {f.ratio:6.2f} "
                  f"{f.wall_ratio:6.2f} {pair.max_rel_error():8.1e}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
