"""MaxPool of int8 and uint8 tensors (math/pool.cc's separable walk: each output row's window rows reduced to
one row, then its windows along the width) against onnxruntime, element by element, on geometries whose
windows cross the padding on every side: kernels 1 to 5, strides 1 to 3, dilations, ceil mode, wide rows,
and SPPF's 5x5 stride-1 windows; and the same bytes on 1 and 3 threads."""
from __future__ import annotations

import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper

import accel

pytestmark = pytest.mark.emulator

# (input shape, attributes)
CASES = [
    ((1, 8, 20, 20), {"kernel_shape": [5, 5], "strides": [1, 1], "pads": [2, 2, 2, 2]}),
    ((1, 5, 17, 23), {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1]}),
    ((2, 3, 9, 11), {"kernel_shape": [2, 3], "strides": [3, 2], "pads": [1, 0, 1, 2]}),
    ((1, 4, 13, 13), {"kernel_shape": [3, 3], "dilations": [2, 2], "pads": [2, 2, 2, 2]}),
    ((1, 3, 10, 9), {"kernel_shape": [3, 2], "strides": [2, 2], "ceil_mode": 1}),
    ((1, 2, 6, 5000), {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1]}),  # rows past the stack row
    ((1, 2, 7, 7), {"kernel_shape": [1, 1]}),
]


@pytest.mark.parametrize("dtype", [np.uint8, np.int8])
@pytest.mark.parametrize("shape,attrs", CASES)
def test_integer_maxpool_matches_onnxruntime(dtype, shape, attrs):
    elem = TensorProto.UINT8 if dtype == np.uint8 else TensorProto.INT8
    node = helper.make_node("MaxPool", ["x"], ["y"], **attrs)
    graph = helper.make_graph([node], "mp", [helper.make_tensor_value_info("x", elem, list(shape))],
                              [helper.make_tensor_value_info("y", elem, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 12)], ir_version=8).SerializeToString()
    info = np.iinfo(dtype)
    x = np.random.default_rng(sum(shape)).integers(info.min, info.max + 1, shape).astype(dtype)
    want = ort.InferenceSession(model, providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    got = {}
    for threads in (1, 3):
        with accel.open(f"emu:cores=1,threads={threads}") as d:
            got[threads] = np.array(d.load(model, input_shapes={"x": list(shape)}).run(x)[0], copy=True)
    assert got[1].shape == want.shape
    differ = int(np.count_nonzero(got[1] != want))
    print(f"{shape} {attrs} {dtype.__name__}: {differ} of {want.size} differ from onnxruntime")
    assert differ == 0
    assert np.array_equal(got[1], got[3])
