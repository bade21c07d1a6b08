"""onnxruntime as the reference of quantized models, with only onnx and onnxruntime (the C tests' case maker
and the cross build use it without accel's models): the session options every int8 comparison shares."""
from __future__ import annotations

import onnx
import onnxruntime as ort


def uint8_activations(model: onnx.ModelProto) -> bool:
    """Does the model quantize an activation to uint8 (a QuantizeLinear with a uint8 zero point or none, or
    DynamicQuantizeLinear)?"""
    inits = {t.name: t.data_type for t in model.graph.initializer}
    for n in model.graph.node:
        if n.op_type == "DynamicQuantizeLinear":
            return True
        if n.op_type == "QuantizeLinear" and (len(n.input) < 3 or inits.get(n.input[2]) == onnx.TensorProto.UINT8):
            return True
    return False


def session_options(model: onnx.ModelProto) -> ort.SessionOptions:
    """One thread (deterministic), the default optimization level, int8 allowed where onnxruntime fuses a
    DQ -> op -> Q group into one integer kernel (session.qdqisint8allowed), and, for uint8 activations,
    exact products on CPUs without VNNI (session.x64quantprecision: without it onnxruntime's AVX2 kernel sums
    pairs of byte products in int16 with saturation, vpmaddubsw; with it, onnxruntime refuses int8
    activations in its integer convolutions, so the option is given only for uint8)."""
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    opts.inter_op_num_threads = 1
    opts.log_severity_level = 3
    opts.add_session_config_entry("session.qdqisint8allowed", "1")
    if uint8_activations(model):
        opts.add_session_config_entry("session.x64quantprecision", "1")
    return opts
