"""QuantizeLinear whose scale and zero point are given or computed at run time (lower/rewrites.py: Div, Round, Add,
Clip, Cast; DynamicQuantizeLinear's function body computes them), bit for bit against onnxruntime, which divides by
the scale and rounds half to even as accel does."""

import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper

pytestmark = pytest.mark.emulator


def _model(ydtype):
    node = helper.make_node("QuantizeLinear", ["x", "scale", "zero"], ["y"])
    g = helper.make_graph([node], "q", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 64]),
                                        helper.make_tensor_value_info("scale", TensorProto.FLOAT, []),
                                        helper.make_tensor_value_info("zero", ydtype, [])],
                          [helper.make_tensor_value_info("y", ydtype, [4, 64])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 19)])
    m.ir_version = 9
    return m.SerializeToString()


@pytest.mark.parametrize("dtype", [np.uint8, np.int8])
def test_a_scale_given_at_run_time_quantizes_as_onnxruntime(dev, dtype):
    m = _model(TensorProto.UINT8 if dtype == np.uint8 else TensorProto.INT8)
    model = dev.load(m)
    session = ort.InferenceSession(m, providers=["CPUExecutionProvider"])
    rng = np.random.default_rng(0)
    info = np.iinfo(dtype)
    for scale, zero in ((0.5, 3), (0.0123, 0), (1e-3, info.max - 1), (7.0, info.min + 2)):
        # Halves (x / scale = n + 0.5) round to even; the wide ones saturate.
        x = np.concatenate([rng.standard_normal(128) * 40, (np.arange(128) - 64 + 0.5) * scale]).astype(np.float32)
        x = x.reshape(4, 64)
        feeds = {"x": x, "scale": np.array(scale, np.float32), "zero": np.array(zero, dtype)}
        (got,) = model.run(feeds)
        (want,) = session.run(None, feeds)
        differ = int((np.asarray(got) != want).sum())
        print(f"scale {scale}, zero point {zero}: {differ} of {want.size} differ from onnxruntime")
        assert np.asarray(got).dtype == dtype and differ == 0
