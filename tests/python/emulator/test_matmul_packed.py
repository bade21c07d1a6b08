"""A MatMul against a constant B on the AVX-512 float path runs on the conv GEMM's kernel with B packed at load
(emulator/src/math/matmul_packed.h): the same bits on 1 to 4 threads (each element sums over K in the same
order whatever the parts), within float32 rounding of a float64 product, and within the same bound of the
BLAS path that other CPUs run (ACCEL_EMU_ISA=avx2 or portable), on shapes whose rows, columns and depth leave
ragged kernel panels and depth blocks, stacked batches and a fused activation; the products it leaves to the
BLAS (thin, shallow, narrow, 1-D B) stay there."""
from __future__ import annotations

from typing import List, Optional

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

import accel

pytestmark = pytest.mark.emulator

# (A's shape, B's shape, activation): rows past a panel of 8, columns past a panel of 48, depths past a block of
# 256 and across several, stacked batches, the thin products that stay on the BLAS, a 1-D B.
CASES = [
    ((8, 300), (300, 96), None),
    ((9, 300), (300, 150), "Relu"),
    ((1, 17, 257), (257, 97), None),
    ((2, 3, 33, 700), (700, 149), "Relu"),
    ((200, 1000), (1000, 130), None),
    ((131, 768), (768, 3072), None),
]
# Products the BLAS keeps on every path.
BLAS_CASES = [
    ((3, 640), (640, 96), None),  # 3 rows: under one panel
    ((40, 33), (33, 200), None),  # shallow
    ((40, 300), (300, 50), None),  # narrow
    ((40, 333), (333,), None),  # B 1-D
]
THREADS = (1, 2, 3, 4)


def float_path(monkeypatch, cap: Optional[str]) -> str:
    if cap:
        monkeypatch.setenv("ACCEL_EMU_ISA", cap)
    else:
        monkeypatch.delenv("ACCEL_EMU_ISA", raising=False)
    with accel.open("emu") as d:
        return d.info.name.split("float: ", 1)[1].split(",", 1)[0]


def model(a_shape, b: np.ndarray, act: Optional[str]) -> bytes:
    y_shape = list(a_shape[:-1]) + list(b.shape[1:])
    nodes = [helper.make_node("MatMul", ["a", "b"], ["t" if act else "y"], name="mm")]
    if act:
        nodes.append(helper.make_node(act, ["t"], ["y"], name="act"))
    g = helper.make_graph(nodes, "mm", [helper.make_tensor_value_info("a", TensorProto.FLOAT, list(a_shape))],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, y_shape)],
                          [numpy_helper.from_array(b, "b")])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], ir_version=8).SerializeToString()


def run(path: bytes, x: np.ndarray, threads: int) -> np.ndarray:
    with accel.open(f"emu:cores=1,threads={threads}") as d:
        return np.array(d.load(path).run(x)[0], copy=True)


def bound(x: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Float32 rounding of a sum of K products: K * eps * sum |x||b| per element (with a margin of 2)."""
    k = x.shape[-1]
    return 2 * k * np.finfo(np.float32).eps * (np.abs(x.astype(np.float64)) @ np.abs(b.astype(np.float64)))


@pytest.mark.parametrize("a_shape,b_shape,act", CASES + BLAS_CASES)
def test_packed_matmul_threads_and_paths(monkeypatch, a_shape, b_shape, act):
    if float_path(monkeypatch, None) != "avx512":
        pytest.skip("this CPU has no AVX-512 float path; the BLAS path is tested by the op tests")
    rng = np.random.default_rng(len(a_shape) * 100 + a_shape[-1])
    x = rng.standard_normal(a_shape).astype(np.float32)
    b = rng.standard_normal(b_shape).astype(np.float32)
    path = model(a_shape, b, act)
    want = x.astype(np.float64) @ b.astype(np.float64)
    if act:
        want = np.maximum(want, 0)
    tol = bound(x, b)
    got = {t: run(path, x, t) for t in THREADS}
    for t in THREADS[1:]:
        diff = int(np.count_nonzero(got[t] != got[1]))
        print(f"{a_shape} x {b_shape}: threads={t}: {diff} of {got[1].size} elements differ from threads=1")
        assert diff == 0
    over = np.abs(got[1] - want) > tol
    print(f"{a_shape} x {b_shape}: largest error {np.abs(got[1] - want).max():.3g}, {int(over.sum())} over the bound")
    assert not over.any()
    others: List[str] = []
    for cap in ("avx2", "portable"):
        if float_path(monkeypatch, cap) == cap:
            other = run(path, x, 1)
            gap = np.abs(other - got[1])
            differ = int(np.count_nonzero(gap))
            print(f"  against the {cap} path: {differ} elements differ, largest {gap.max():.3g}")
            assert (gap <= 2 * tol).all()
            others.append(cap)
    assert "portable" in others
