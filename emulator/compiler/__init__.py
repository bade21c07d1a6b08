"""accel.compiler: ONNX in, the emulator's .accm model format out (emulator/FORMAT.md).

    from accel import compiler
    data = compiler.compile_model("model.onnx", input_shapes={"x": (1, 3, 224, 224)})
    compiler.compile_file("model.onnx", "model.accm")
    tables = compiler.accm.read(data)

Steps: Horizon's calibrated ONNX read (horizon_ops.py: HzCalibration, HzPreprocess, HzQuantize and HzDequantize
rewritten as QDQ nodes and a Conv; Horizon's other ops refused by name), when asked the float counterpart of a
quantized model (dequantize.py: its activations' QuantizeLinear and DequantizeLinear bypassed), camera frames in
place of image inputs
(frame_inputs.py: their conversion prepended as ONNX nodes), import
(static input shapes, initializers and Constant nodes as constants), a check that every op is
supported (coverage.py: one error names them all), for a device's int8 rules
its form of a QDQ model (qdq_device.py), QDQ fusion (a quantized model's DequantizeLinear -> op ->
QuantizeLinear groups become int8 ops as onnxruntime fuses them), constant folding
(shape subgraphs and any node whose inputs are all constant), lowering to the runtime op set with
per-op shape rules (on the way: an op ONNX defines by a function body expanded into it, If, Scan and Loop inlined
or unrolled, Compress, DFT and STFT rewritten into other ops, float16 computed in float32 where an op has no
float16 form), float16 kept in float32 between ops computed in float32 (half_chains.py, as onnxruntime),
BatchNormalization folded into Conv (or lowered to mul + add), copy elimination,
constant bias/scale folded into conv and gemm (MatMul + Add -> Gemm), activation fusion, dead-code
removal, and the byte-exact writer.
"""

from __future__ import annotations

import contextlib
import os

from . import (accm, affine, batchnorm, coverage, declined, dequantize, emit, extra_outputs, folding, frame_inputs,
               fusion, half_chains, horizon_ops, importer, io_declarations, lower, qdq, qdq_device)
from .coverage import UnsupportedOpsError
from .errors import (CompileError, ExtraOutputError, FrameInputError, InputShapeError, NoFloatCounterpartError,
                     RunTimeConditionError)
from .lower import SUPPORTED_OPS
from . import qinteger_fusion  # its own line: the list above is where every pass merges

__all__ = ["FOLD_LIMIT_BYTES", "INT8_RULES", "CompileError", "ExtraOutputError", "FrameInputError", "InputShapeError",
           "NoFloatCounterpartError", "RunTimeConditionError", "SUPPORTED_OPS", "UnsupportedOpsError", "accm",
           "compile_file", "compile_model", "coverage", "declined", "frame_inputs", "summary", "write_file"]


INT8_RULES = tuple(accm.INT8_RULES)
FOLD_LIMIT_BYTES = folding.FOLD_LIMIT_BYTES


def compile_model(model, input_shapes=None, int8="ort", fold_limit=folding.FOLD_LIMIT_BYTES,
                  extra_outputs=None, image_inputs=None, dequantized=False) -> bytes:
    """Compiles an ONNX model (a path, bytes or onnx.ModelProto) to .accm bytes.

    input_shapes maps graph input names to shapes (tuples of ints); it fixes symbolic dims and
    overrides the model's own. A dim that is neither static in the model nor given raises
    CompileError (a ValueError) naming the input and the dim. Unsupported ops, attributes and dtypes
    raise CompileError naming the op type and the node. int8 names the integer arithmetic of the quantized
    ops (INT8_RULES: "ort", onnxruntime's CPU kernels; "dpu", the Vitis AI DPU's fix-point rules, which need
    power-of-two scales; "bpu", the Horizon BPU's integer multipliers); it is recorded in the model. fold_limit (bytes,
    default FOLD_LIMIT_BYTES, 256 MiB) bounds what folding one node may compute on the host: a node past
    it raises CompileError naming it and the size, before anything is computed. Host memory running
    out raises MemoryError.

    extra_outputs (None, "all" or a list of ONNX tensor names) keeps intermediate tensors as outputs after the
    model's own, in the order given ("all": every tensor the model computes at run time, in graph order; for a
    quantized model the int8 tensors with their quantization, not their dequantized copies). The compiler never
    fuses a requested tensor away; requesting one never changes a quantized model's integers, so a float tensor
    that only exists inside a fused int8 op cannot be given. A name that cannot be given raises ExtraOutputError
    (a CompileError) naming it (and the nearest names the model has).

    image_inputs maps float image inputs to the camera frame that replaces each, {"images": {"format": "nv12",
    "to": "rgb", "mean": [...], "scale": [...], "range": "full"}} (frame_inputs.py; formats nv12, nv12_planes (two
    inputs, images_y and images_uv), y, yuv444, rgb, bgr; "to" the model's channel order; the model is fed
    (RGB - mean) * scale, RGB converted with BT.601 in "full" or "video" range): the compiled model takes the frame
    as uint8 in the ABI's image layout and converts it first. A request that is not a dict of dicts raises TypeError;
    a bad one, or one the model cannot take (a missing input, a shape that is not an image, odd NV12 sizes),
    FrameInputError (a CompileError) naming the input and what is wrong.

    dequantized compiles a quantized model's float counterpart (dequantize.py): every activation in float, the
    weights the real values of their integers, a quantized input or output a float one under its name. A model in
    the operator form (QLinearConv, MatMulInteger, ...) has none: NoFloatCounterpartError naming the nodes.
    """
    if input_shapes is not None and not hasattr(input_shapes, "items"):
        raise TypeError("input_shapes must be a dict mapping input names to shapes")
    if int8 not in INT8_RULES:
        raise ValueError(f"int8 must be one of {', '.join(INT8_RULES)}, not {int8!r}")
    if not isinstance(fold_limit, int) or fold_limit < 0:
        raise ValueError(f"fold_limit must be a number of bytes (an int >= 0), not {fold_limit!r}")
    frames = frame_inputs.parse(image_inputs)  # the request's own errors before any work
    try:
        return _compile(model, input_shapes, int8, fold_limit, extra_outputs, frames, bool(dequantized))
    except CompileError as e:
        if isinstance(e.__cause__, MemoryError):  # wrapped by a step that words other failures
            raise MemoryError(f"out of host memory compiling the model: {e}") from e
        raise


def _compile(model, input_shapes, int8, fold_limit, extra, frame_requests, dequantized) -> bytes:
    proto = horizon_ops.rewrite(importer.load(model))
    if dequantized:
        proto = dequantize.float_counterpart(proto)
    proto, input_shapes, frames = frame_inputs.prepend(proto, frame_requests, input_shapes)
    imported = importer.import_model(proto, input_shapes, extra)
    coverage.check(imported.nodes, [n for n, v in imported.graph.values.items() if v.is_const])
    if int8 != "ort":
        qdq_device.prepare(imported, int8)
    qdq.fuse(imported, int8)
    extra_outputs.after_quantized_passes(imported.extra, imported)
    g = lower.lower(imported, fold_limit, int8)
    extra_outputs.drop_constants(imported.extra, g)
    g.remove_dead()
    half_chains.keep_float32(g)
    batchnorm.fold_batchnorm(g)
    fusion.simplify_copies(g)
    qinteger_fusion.fuse_integer_epilogue(g)
    affine.fold_bias_and_scale(g)
    fusion.fuse_layernorm(g)
    fusion.fuse_silu(g)
    fusion.fuse_activations(g)
    tensors, nodes, inputs, outputs = emit.build(g, frames, io_declarations.denoted_layouts(proto),
                                                 io_declarations.io_shifts(proto))
    try:
        return accm.write(tensors, nodes, inputs, outputs, int8_rules=int8)
    except ValueError as e:
        raise CompileError(str(e)) from e


def compile_file(src, dst, input_shapes=None, int8="ort", fold_limit=FOLD_LIMIT_BYTES, extra_outputs=None,
                 image_inputs=None) -> dict:
    """Compiles the ONNX file `src` and writes the .accm file `dst`. Returns summary() of it."""
    return write_file(compile_model(os.fspath(src), input_shapes, int8, fold_limit, extra_outputs, image_inputs), dst)


def write_file(data: bytes, dst) -> dict:
    """Writes the .accm bytes `data` to `dst` whole or not at all. Returns summary() of it."""
    tmp = f"{os.fspath(dst)}.tmp{os.getpid()}"
    try:  # the temporary file goes whatever stops the write (Ctrl-C, a full disk)
        with open(tmp, "wb") as f:
            f.write(data)
        os.replace(tmp, dst)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return summary(data)


def summary(data) -> dict:
    """Counts of an .accm image: nodes, tensors, inputs, outputs, weight_bytes, file_bytes."""
    t = accm.read(data)
    return {
        "nodes": t["header"]["node_count"],
        "tensors": t["header"]["tensor_count"],
        "inputs": t["header"]["input_count"],
        "outputs": t["header"]["output_count"],
        "weight_bytes": sum(x["data_size"] for x in t["tensors"] if x["kind"] == accm.KIND_CONSTANT),
        "file_bytes": t["header"]["file_size"],
    }
