"""Quantized (int8) versions of the test models, made at test time with onnxruntime.quantization and cached
like catalog.model_path (the file name holds the options and a digest of everything that makes the model).

    from models import quantized
    path = quantized.static_model("resnet18", activation="int8", symmetric=True)   # QDQ, per-channel weights
    feeds = quantized.make_feeds("resnet18")                                        # the test input, by name
    (logits,) = quantized.reference(path, feeds)                                    # onnxruntime's int8 answer

Three forms: `static_model` (QDQ: QuantizeLinear/DequantizeLinear pairs around float ops, the form vendor
compilers take), `operator_model` (QOperator: QLinearConv, QLinearAdd, ...) and `dynamic_model` (weights
quantized offline, activations at run time: DynamicQuantizeLinear, MatMulInteger, ConvInteger, ...).
Names: "tiny_cnn" (the bundled accel/models/tiny_cnn.onnx), "mlp" (a MatMul/Gemm network built here) and
every model of catalog.MODELS. Every model is quantized at its test shape, fixed in the graph, so the
quantizer's shape inference and calibration are static.
"""
from __future__ import annotations

import functools
import hashlib
import logging
import os
import sys
import tempfile
from pathlib import Path
from typing import Callable, Dict, List, NamedTuple, Optional

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper, version_converter
from onnxruntime.quantization import (CalibrationDataReader, QuantFormat, QuantType, quant_pre_process,
                                      quantize_dynamic, quantize_static)

import accel
from accel.models import ppocr

from . import catalog, graph_builder, images, mobilenetv2, ort_reference, resnet18

Shape = catalog.Shape
TINY_CNN = Path(accel.__file__).resolve().parent / "models" / "tiny_cnn.onnx"
# Per-channel DequantizeLinear (the `axis` attribute) is opset 13; older models are converted first.
MIN_OPSET = 13
# The calibration inputs: image-like, and none of them the test input (catalog.INPUT_SEED).
CALIBRATION_SEEDS = (1, 2, 3, 4)
ACTIVATIONS = {"uint8": QuantType.QUInt8, "int8": QuantType.QInt8}
MLP_SHAPE = (4, 64)
MLP_HIDDEN = 128
MLP_CLASSES = 10


class Source(NamedTuple):
    """A float model to quantize: its one input, the shape it is fixed to, and how to get it."""
    input_name: str
    shape: Shape
    load: Callable[[Optional[Path]], onnx.ModelProto]  # folder (None: the model cache) -> the float model
    make_input: Callable[[int], np.ndarray]  # seed -> an input of `shape`


def names() -> List[str]:
    """Every model this module can quantize."""
    return ["tiny_cnn", "mlp", *catalog.MODELS]


def default_dir() -> Path:
    """Where quantized models are cached: beside the built float ones."""
    return catalog.built_dir() / "quantized"


# -- the float models ----------------------------------------------------------------------------------


def build_mlp(seed: int = catalog.WEIGHT_SEED) -> onnx.ModelProto:
    """x[4, 64] -> MatMul + Add -> Relu -> Gemm (transB, bias) -> logits[4, 10], random weights from `seed`:
    the two float ops dynamic quantization rewrites (MatMul, Gemm), with a batch above one."""
    r = np.random.default_rng(seed)
    n, features = MLP_SHAPE
    w1 = (r.standard_normal((features, MLP_HIDDEN)) * np.sqrt(2.0 / features)).astype(np.float32)
    b1 = r.normal(0.0, 0.1, MLP_HIDDEN).astype(np.float32)
    w2 = (r.standard_normal((MLP_CLASSES, MLP_HIDDEN)) * np.sqrt(1.0 / MLP_HIDDEN)).astype(np.float32)
    b2 = r.normal(0.0, 0.1, MLP_CLASSES).astype(np.float32)
    nodes = [helper.make_node("MatMul", ["x", "w1"], ["h0"], name="fc1"),
             helper.make_node("Add", ["h0", "b1"], ["h1"], name="fc1_bias"),
             helper.make_node("Relu", ["h1"], ["h2"], name="relu"),
             helper.make_node("Gemm", ["h2", "w2", "b2"], ["logits"], name="fc2", transB=1)]
    g = helper.make_graph(
        nodes, "mlp",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [n, features])],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, [n, MLP_CLASSES])],
        [numpy_helper.from_array(a, k) for k, a in (("w1", w1), ("b1", b1), ("w2", w2), ("b2", b2))])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", graph_builder.OPSET)],
                          producer_name="accel-tests")
    m.ir_version = graph_builder.IR_VERSION
    onnx.checker.check_model(m)
    return m


def _mlp_input(seed: int) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(MLP_SHAPE).astype(np.float32)


def _tiny_cnn_spec() -> catalog.ModelSpec:
    """tiny_cnn as a catalog entry, its input's name and shape read from the file (a scene image, as the
    classifiers of the catalog take)."""
    (inp,) = onnx.load(str(TINY_CNN), load_external_data=False).graph.input
    shape = tuple(d.dim_value for d in inp.type.tensor_type.shape.dim)
    return catalog.ModelSpec("tiny_cnn", inp.name, shape, shape, images.scene, images.imagenet_normalized, 1)


def _catalog_source(spec: catalog.ModelSpec, load: Callable[[Optional[Path]], onnx.ModelProto],
                    shape: Optional[Shape]) -> Source:
    shape = shape or spec.test_shape
    return Source(spec.input_name, shape, load, lambda seed: spec.make_input(shape, seed))


def _load_catalog(name: str, folder: Optional[Path]) -> onnx.ModelProto:
    """A catalog model; built ones into `folder` (as the real-model tests do), fetched ones from the cache."""
    return onnx.load(str(catalog.model_path(name, folder if catalog.MODELS[name].build else None)))


def source(name: str, shape: Optional[Shape] = None) -> Source:
    """The float model `name` (one of names()) and its input, of `shape` (None: the test shape; the catalog's
    models only)."""
    if name == "mlp":
        return Source("x", MLP_SHAPE, lambda folder: build_mlp(), _mlp_input)
    if name == "tiny_cnn":
        return _catalog_source(_tiny_cnn_spec(), lambda folder: onnx.load(str(TINY_CNN)), None)
    if name in catalog.MODELS:
        return _catalog_source(catalog.MODELS[name], functools.partial(_load_catalog, name), shape)
    raise KeyError(f"unknown model {name!r}; known: {', '.join(names())}")


def make_feeds(name: str, seed: int = catalog.INPUT_SEED) -> Dict[str, np.ndarray]:
    """The input of model `name` made with `seed` (default: the tests' seed), keyed by input name."""
    src = source(name)
    return {src.input_name: src.make_input(seed)}


# -- preparing and quantizing --------------------------------------------------------------------------


def _opset(model: onnx.ModelProto) -> int:
    return next(o.version for o in model.opset_import if o.domain in ("", "ai.onnx"))


def _fix_input_shape(model: onnx.ModelProto, input_name: str, shape: Shape) -> None:
    """Sets the input's dims to `shape` and drops the shapes recorded for the other values: exporters write
    symbolic dims (and -1) that would keep shape inference from finding the static ones."""
    (inp,) = (i for i in model.graph.input if i.name == input_name)
    dims = inp.type.tensor_type.shape.dim
    assert len(dims) == len(shape), (input_name, len(dims), shape)
    for dim, size in zip(dims, shape):
        dim.Clear()
        dim.dim_value = size
    del model.graph.value_info[:]
    for out in model.graph.output:
        out.type.tensor_type.ClearField("shape")


def _prepared(src: Source, folder: Optional[Path], work: Path) -> Path:
    """The float model as the quantizer wants it, written into `work`: input shape fixed, opset >= 13, then
    quant_pre_process (onnxruntime's basic graph optimizations, e.g. BatchNormalization folded into Conv,
    and ONNX shape inference). It is given a file: from a ModelProto with no initializers (the PP-OCR models
    keep their weights in Constant nodes) its optimization step fails, and it goes on without it."""
    model = src.load(folder)
    _fix_input_shape(model, src.input_name, src.shape)
    if _opset(model) < MIN_OPSET:
        model = version_converter.convert_version(model, MIN_OPSET)
    fixed, pre = work / "fixed.onnx", work / "prepared.onnx"
    onnx.save(model, str(fixed))
    quant_pre_process(str(fixed), str(pre), skip_symbolic_shape=True)
    return pre


class _Calibration(CalibrationDataReader):
    """The inputs quantize_static runs the model on to find each activation's range: one per seed."""

    def __init__(self, src: Source) -> None:
        self._feeds = iter([{src.input_name: src.make_input(seed)} for seed in CALIBRATION_SEEDS])

    def get_next(self) -> Optional[Dict[str, np.ndarray]]:
        return next(self._feeds, None)


@functools.cache
def _digest() -> str:
    """A hash of what makes a quantized model: this module, the float models' sources and builders, the
    input makers, the bundled CNN and the quantizer's (onnxruntime's) and onnx's versions."""
    h = hashlib.sha256()
    for mod in (sys.modules[__name__], catalog, graph_builder, images, mobilenetv2, resnet18, ppocr):
        h.update(Path(mod.__file__).read_bytes())
    h.update(TINY_CNN.read_bytes())
    h.update(f"onnxruntime {ort.__version__} onnx {onnx.__version__}".encode())
    return h.hexdigest()[:12]


def float_model(name: str, shape: Optional[Shape] = None) -> onnx.ModelProto:
    """The float model `name` with its input fixed to `shape` (None: the test shape), as it is quantized."""
    src = source(name, shape)
    model = src.load(None)
    _fix_input_shape(model, src.input_name, src.shape)
    return model


#: onnxruntime's quantizer's name for a weight's dequantized value: ``<weight>_DequantizeLinear_Output``.
WEIGHT_SUFFIX = "_DequantizeLinear_Output"


def float_twin(name: str, qdq_path: Path, work: Path) -> onnx.ModelProto:
    """The float model `name` as the quantizer quantized it (quant_pre_process's output, made in the folder `work`),
    each of its weights replaced by the QDQ model's real value of it (its DequantizeLinear of the integers, computed
    here with numpy): what the QDQ model computes with every activation in float. ValueError if a weight of the QDQ
    model has no counterpart by name."""
    base = onnx.load(str(_prepared(source(name), None, work)))
    qdq = onnx.load(str(qdq_path))
    init = {i.name: numpy_helper.to_array(i) for i in qdq.graph.initializer}
    weights = {}
    for n in qdq.graph.node:
        if n.op_type != "DequantizeLinear" or n.input[0] not in init:
            continue
        q, s = init[n.input[0]].astype(np.float64), init[n.input[1]].astype(np.float32)
        z = init[n.input[2]].astype(np.float64) if len(n.input) > 2 and n.input[2] else np.zeros_like(s)
        if s.size > 1:
            shape = [1] * q.ndim
            shape[next((a.i for a in n.attribute if a.name == "axis"), 1)] = -1
            s, z = s.reshape(shape), z.reshape(shape)
        weights[n.output[0].removesuffix(WEIGHT_SUFFIX)] = ((q - z).astype(np.float32) * s).astype(np.float32)
    for i in base.graph.initializer:
        if i.name in weights:
            i.CopyFrom(numpy_helper.from_array(weights.pop(i.name), i.name))
    if weights:
        raise ValueError(f"weights of {qdq_path} with no counterpart in the float model: {sorted(weights)}")
    return base


def _cached(name: str, variant: str, folder: Optional[Path], quantize: Callable[[Source, Path, Path], None],
            shape: Optional[Shape] = None) -> Path:
    """The file of model `name` quantized as `variant` (the options, spelled into the file name) at input
    `shape` (None: the test shape), made once into `folder` (default: default_dir()) by quantize(source,
    prepared model, output), written atomically."""
    src = source(name, shape)
    if shape is not None:
        variant += "-" + "x".join(str(d) for d in shape)
    out_dir = Path(folder) if folder is not None else default_dir()
    dst = out_dir / f"{name}-{variant}-{_digest()}.onnx"
    if not dst.is_file():
        out_dir.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(prefix=f".{dst.name}.", dir=out_dir) as tmp:
            work = Path(tmp)
            out = work / "quantized.onnx"
            quantize(src, _prepared(src, folder, work), out)
            os.replace(out, dst)
    return dst


def _static(fmt: QuantFormat, activation: str, symmetric: bool, per_channel: bool) -> Callable[..., None]:
    """quantize_static with int8 weights and `activation` activations, calibrated on CALIBRATION_SEEDS."""
    if activation not in ACTIVATIONS:
        raise ValueError(f"activation must be one of {', '.join(ACTIVATIONS)}, not {activation!r}")

    def quantize(src: Source, pre: Path, out: Path) -> None:
        quantize_static(str(pre), str(out), _Calibration(src), quant_format=fmt,
                        activation_type=ACTIVATIONS[activation], weight_type=QuantType.QInt8,
                        per_channel=per_channel, extra_options={"ActivationSymmetric": symmetric})
    return quantize


def _static_variant(form: str, activation: str, symmetric: bool, per_channel: bool) -> str:
    return f"{form}-{activation}-{'sym' if symmetric else 'asym'}-{'perchannel' if per_channel else 'pertensor'}"


def static_model(name: str, *, activation: str = "uint8", symmetric: bool = False, per_channel: bool = True,
                 folder: Optional[Path] = None, shape: Optional[Shape] = None) -> Path:
    """Model `name` in QDQ form: int8 weights (per output channel unless per_channel=False), `activation`
    ("uint8" or "int8") activations with ranges calibrated on seeded inputs, symmetric (zero point 0) if
    `symmetric`; at input `shape` (None: the test shape)."""
    return _cached(name, _static_variant("qdq", activation, symmetric, per_channel), folder,
                   _static(QuantFormat.QDQ, activation, symmetric, per_channel), shape)


def operator_model(name: str, *, activation: str = "uint8", symmetric: bool = False, per_channel: bool = True,
                   folder: Optional[Path] = None) -> Path:
    """Model `name` in QOperator form (QLinearConv, QLinearAdd, QLinearMatMul, ...), quantized as
    static_model does; meant for the CNNs (tiny_cnn, resnet18, mobilenetv2)."""
    return _cached(name, _static_variant("qop", activation, symmetric, per_channel), folder,
                   _static(QuantFormat.QOperator, activation, symmetric, per_channel))


def _dynamic(src: Source, pre: Path, out: Path) -> None:
    quantize_dynamic(str(pre), str(out), weight_type=QuantType.QInt8)


def quantize_dynamic_file(src: str, out: str) -> str:
    """The ONNX file `src` quantized by quantize_dynamic with its defaults into `out` (its advice to
    pre-process first, logged as a warning, silenced); returns `out`."""
    root = logging.getLogger()
    level = root.level
    root.setLevel(logging.ERROR)
    try:
        quantize_dynamic(src, out)
    finally:
        root.setLevel(level)
    return out


def dynamic_model(name: str, folder: Optional[Path] = None) -> Path:
    """Model `name` quantized dynamically with the quantizer's defaults: int8 weights, activations quantized
    at run time (DynamicQuantizeLinear, MatMulInteger, ConvInteger, ...); meant for the models with MatMul
    or Gemm (mlp, ppocr_rec)."""
    return _cached(name, "dynamic-int8", folder, _dynamic)


# -- the reference -------------------------------------------------------------------------------------


def reference(path: Path, feeds: Dict[str, np.ndarray]) -> List[np.ndarray]:
    """onnxruntime's outputs of the model at `path` on `feeds`, on the CPU with ort_reference.session_options."""
    return reference_model(onnx.load(str(path)), feeds)


def reference_model(model: onnx.ModelProto, feeds: Dict[str, np.ndarray]) -> List[np.ndarray]:
    """reference() of a model in memory."""
    sess = ort.InferenceSession(model.SerializeToString(), ort_reference.session_options(model),
                                providers=["CPUExecutionProvider"])
    return sess.run(None, feeds)
