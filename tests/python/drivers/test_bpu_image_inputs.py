"""Camera frames into Horizon models through the bpu driver (issue 22), on the stand-in SDKs: image inputs of
X3/X5 `.bin` models (libdnn's IMG types: NV12 in one block or as NV12_SEPARATE planes, Y, YUV444, RGB, BGR)
and S100 `.hbm` models (hb_compile's y/uv input pair), described through the ABI as image tensors (uint8,
NHWC, the image's format, size, planes and alignment) and run.

Two kinds of model:
  - frame models: the emulator model takes the frame's bytes (a uint8 input) and gives them back as floats,
    so the test sees exactly what the stand-in's BPU read: the planes gathered, the row padding dropped;
  - image models: a small convolution compiled, as Horizon's toolchain does, with the frame's conversion
    inside (accel.compiler.compile_model's image_inputs: the emulator's own preprocessing), fed frames made
    by accel.image; the outputs equal the emulator's running the same model bit for bit.

Runs on the device under test when it is the bpu driver (ACCEL_TEST_DEVICE=bpu:0; ci/test.sh, with
ACCEL_TEST_MODEL_FORMAT=.bin and .hbm); deselected elsewhere (conftest.py).
"""
from __future__ import annotations

import ctypes
import os
from pathlib import Path

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

import accel
import accel.image as image
from standin_toolchain import INT8_RULES, suffix_for, tool

pytestmark = pytest.mark.vendor("bpu")

HBM = suffix_for("bpu") == ".hbm"
# The frames: 8 rows of 24 pixels. 24 is not a multiple of 16 (X3/X5 pad NV12 and Y rows to 16 bytes:
# 32) nor of 32 (S100 pads its y/uv planes' rows to 32 bytes: 32 too), so every form has padding to drop.
H, W = 8, 24

# accel_image_format (accel.h, ABI 1.2)
NV12, NV12_Y, NV12_UV, Y, YUV444, RGB, BGR = 1, 2, 3, 4, 5, 6, 7
# libdnn image type -> (accel_image_format, the frame's shape, its ABI strides, plane count, plane offsets,
# width_align, height_align) for an image of W x H.
BIN_IMAGES = {
    "NV12": (NV12, (1, H * 3 // 2, W, 1), (32 * H * 3 // 2, 32, 1, 1), 2, (0, 32 * H), 2, 2),
    "NV12_SEPARATE": (NV12, (1, H * 3 // 2, W, 1), (32 * H * 3 // 2, 32, 1, 1), 2, (0, 32 * H), 2, 2),
    "Y": (Y, (1, H, W, 1), (32 * H, 32, 1, 1), 1, (0, 0), 1, 1),
    "YUV444": (YUV444, (1, H, W, 3), (3 * W * H, 3 * W, 3, 1), 1, (0, 0), 1, 1),
    "RGB": (RGB, (1, H, W, 3), (3 * W * H, 3 * W, 3, 1), 1, (0, 0), 1, 1),
    "BGR": (BGR, (1, H, W, 3), (3 * W * H, 3 * W, 3, 1), 1, (0, 0), 1, 1),
}


# ---------------------------------------------------------------------------------------------------
# models
# ---------------------------------------------------------------------------------------------------

def _onnx(nodes, inputs, outputs, inits=()):
    g = helper.make_graph(nodes, "m", inputs, outputs, list(inits))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    return m.SerializeToString()


def _frame_accm(frames):
    """An emulator model whose uint8 inputs `frames` ({name: shape}) come back as float32 outputs `<name>_out`."""
    from accel import compiler

    onnx_bytes = _onnx(
        [helper.make_node("Cast", [n], [n + "_out"], to=TensorProto.FLOAT) for n in frames],
        [helper.make_tensor_value_info(n, TensorProto.UINT8, list(s)) for n, s in frames.items()],
        [helper.make_tensor_value_info(n + "_out", TensorProto.FLOAT, list(s)) for n, s in frames.items()])
    return compiler.compile_model(onnx_bytes)


def _conv_onnx():
    """images[1, 3, H, W] float -> y = relu(conv3x3(images) + b), 4 channels."""
    rng = np.random.default_rng(7)
    w = rng.normal(0, 0.3, (4, 3, 3, 3)).astype(np.float32)
    b = rng.normal(0, 0.1, (4,)).astype(np.float32)
    return _onnx(
        [helper.make_node("Conv", ["images", "w", "b"], ["c"], pads=[1, 1, 1, 1]),
         helper.make_node("Relu", ["c"], ["y"])],
        [helper.make_tensor_value_info("images", TensorProto.FLOAT, [1, 3, H, W])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4, H, W])],
        [numpy_helper.from_array(w, "w"), numpy_helper.from_array(b, "b")])


def _pack(accm, spec, name="m"):
    """A `.bin` (or `.hbm` on S100) of the emulator model `accm`, its tensors described by `spec`."""
    t = tool(suffix_for("bpu"))
    return t.pack([t.accm_record(name, accm, spec)])


def _packed_file(tmp_path, onnx_bytes, spec):
    """The ONNX model packed by the stand-in's own tool, as a user's toolchain would make the file."""
    onnx_path = tmp_path / "images_model.onnx"
    onnx_path.write_bytes(onnx_bytes)
    t = tool(suffix_for("bpu"))
    out = tmp_path / ("images_model" + suffix_for("bpu"))
    out.write_bytes(t.pack([t.model_record(onnx_path, spec)]))
    return out


# ---------------------------------------------------------------------------------------------------
# the ABI's image fields, as the driver reports them
# ---------------------------------------------------------------------------------------------------

class _Quant(ctypes.Structure):
    _fields_ = [("type", ctypes.c_int32), ("axis", ctypes.c_int32), ("count", ctypes.c_uint32),
                ("reserved", ctypes.c_uint32), ("scales", ctypes.c_void_p), ("zero_points", ctypes.c_void_p),
                ("shifts", ctypes.c_void_p)]


class _TensorInfo(ctypes.Structure):
    """accel_tensor_info of ABI 1.2."""
    _fields_ = [("struct_size", ctypes.c_uint32), ("dtype", ctypes.c_int32), ("layout", ctypes.c_int32),
                ("ndim", ctypes.c_uint32), ("name", ctypes.c_char_p), ("shape", ctypes.c_int64 * 8),
                ("strides", ctypes.c_int64 * 8), ("byte_size", ctypes.c_uint64), ("quant", _Quant),
                ("image_format", ctypes.c_int32), ("plane_count", ctypes.c_uint32),
                ("plane_offset", ctypes.c_uint64 * 2), ("image_width", ctypes.c_uint32),
                ("image_height", ctypes.c_uint32), ("width_align", ctypes.c_uint32),
                ("height_align", ctypes.c_uint32)]


def _abi_inputs(path):
    """[(name, image_format, plane_count, plane_offset, image_width, image_height, width_align,
    height_align)] of the model file's inputs, read through libaccel's C API (accel_model_input_info)."""
    # The front-ends' own copy (by its soname's file): a second copy of libaccel in the process would load
    # the drivers again and take their error reports for itself.
    lib = ctypes.CDLL(str(Path(accel.__file__).parent / "lib" / "libaccel.so.1"))
    dev, model = ctypes.c_void_p(), ctypes.c_void_p()
    assert lib.accel_device_open(os.environ.get("ACCEL_TEST_DEVICE", "bpu:0").encode(), ctypes.byref(dev)) == 0
    try:
        assert lib.accel_model_load_file(dev, str(path).encode(), ctypes.byref(model)) == 0
        try:
            count = ctypes.c_size_t()
            assert lib.accel_model_input_count(model, ctypes.byref(count)) == 0
            out = []
            for i in range(count.value):
                info = _TensorInfo()
                info.struct_size = ctypes.sizeof(_TensorInfo)
                assert lib.accel_model_input_info(model, ctypes.c_size_t(i), ctypes.byref(info)) == 0
                out.append((info.name.decode(), info.image_format, info.plane_count, tuple(info.plane_offset),
                            info.image_width, info.image_height, info.width_align, info.height_align))
            return out
        finally:
            lib.accel_model_release(model)
    finally:
        lib.accel_device_release(dev)


FORMAT_NAMES = {NV12: "nv12", NV12_Y: "nv12_y", NV12_UV: "nv12_uv", Y: "y", YUV444: "yuv444", RGB: "rgb", BGR: "bgr"}


def _check_python_image_info(infos, raw):
    """Python's TensorInfo.image (accel.TensorInfo, where the front-ends read ABI 1.2's fields) says what the
    driver reported through the C API (`raw`, _abi_inputs)."""
    for info, (name, fmt, planes, offsets, width, height, walign, halign) in zip(infos, raw):
        if not hasattr(info, "image"):  # a front-end that does not read ABI 1.2's fields yet
            continue
        image = info.image
        assert (image.format, image.width, image.height) == (FORMAT_NAMES[fmt], width, height), name
        assert tuple(image.plane_offsets) == offsets[:planes], name
        assert (image.width_align, image.height_align) == (walign, halign), name


def _frames(seed):
    rng = np.random.default_rng(seed)
    return rng.integers(0, 256, (H, W, 3), dtype=np.uint8)


# ---------------------------------------------------------------------------------------------------
# frame models: what the driver describes and what the BPU reads
# ---------------------------------------------------------------------------------------------------

# Each generation's image inputs: libdnn's types (X3/X5 .bin), or S100's y/uv pair (.hbm).
FRAME_KINDS = ["y/uv pair"] if HBM else sorted(BIN_IMAGES)


@pytest.mark.parametrize("kind", FRAME_KINDS)
def test_image_input_is_described_and_read_as_the_frame(dev, tmp_path, kind):
    if HBM:
        return _check_yuv_pair(dev, tmp_path)
    fmt, shape, strides, planes, offsets, walign, halign = BIN_IMAGES[kind]
    path = tmp_path / "frame.bin"
    path.write_bytes(_pack(_frame_accm({"images": shape}), {"inputs": {"images": {"type": kind}}}))
    model = dev.load(str(path))
    (info,) = model.inputs
    assert (info.name, info.dtype, info.shape, info.layout) == ("images", np.uint8, shape, "NHWC")
    assert info.strides == strides and info.nbytes == strides[0]
    raw = _abi_inputs(path)
    assert raw == [("images", fmt, planes, offsets, W, H, walign, halign)]
    _check_python_image_info(model.inputs, raw)

    frame = np.random.default_rng(3).integers(0, 256, shape, dtype=np.uint8)
    (got,) = model.run(frame)
    np.testing.assert_array_equal(np.asarray(got), frame.astype(np.float32))
    (got,) = model.run_async(frame).result(timeout=30)
    np.testing.assert_array_equal(np.asarray(got), frame.astype(np.float32))


def _check_yuv_pair(dev, tmp_path):
    planes = {"images_y": (1, H, W, 1), "images_uv": (1, H // 2, W // 2, 2)}
    spec = {"inputs": {"images_y": {"type": "U8", "stride": [-1, -1, 1, 1]},
                       "images_uv": {"type": "U8", "stride": [-1, -1, 2, 1]}}}
    path = tmp_path / "frame.hbm"
    path.write_bytes(_pack(_frame_accm(planes), spec))
    model = dev.load(str(path))
    y_info, uv_info = model.inputs
    assert (y_info.name, y_info.dtype, y_info.shape) == ("images_y", np.uint8, planes["images_y"])
    assert (uv_info.name, uv_info.dtype, uv_info.shape) == ("images_uv", np.uint8, planes["images_uv"])
    # Rows and planes aligned to 32 bytes, as Horizon's S100 documentation asks of dynamic y/uv strides.
    assert y_info.strides == (32 * H, 32, 1, 1) and y_info.nbytes == 32 * H
    assert uv_info.strides == (32 * H // 2, 32, 2, 1) and uv_info.nbytes == 32 * H // 2
    raw = _abi_inputs(path)
    assert raw == [("images_y", NV12_Y, 1, (0, 0), W, H, 2, 2), ("images_uv", NV12_UV, 1, (0, 0), W, H, 2, 2)]
    _check_python_image_info(model.inputs, raw)

    y, uv = image.bgr_to_nv12(_frames(4), planes=True)
    got = model.run([y[None, :, :, None], uv[None]])
    np.testing.assert_array_equal(np.asarray(got[0])[0, :, :, 0], y.astype(np.float32))
    np.testing.assert_array_equal(np.asarray(got[1])[0], uv.astype(np.float32))
    (got_y, _) = model.run_async([y[None, :, :, None], uv[None]]).result(timeout=30)
    np.testing.assert_array_equal(np.asarray(got_y)[0, :, :, 0], y.astype(np.float32))


# ---------------------------------------------------------------------------------------------------
# image models: the conversion inside, the same result as the emulator's
# ---------------------------------------------------------------------------------------------------

CONVERSION = {"to": "rgb", "mean": [123.0, 117.0, 104.0], "scale": [0.0171, 0.0175, 0.0174], "range": "full"}
VIDEO_BGR = {**CONVERSION, "to": "bgr", "range": "video"}


def _feeds(kind, conversion):
    """The frame(s) a model of image input `kind` takes, made by accel.image from a random BGR image."""
    bgr = _frames(5)
    rng = conversion["range"]
    if kind == "y/uv pair":
        y, uv = image.bgr_to_nv12(bgr, range=rng, planes=True)
        return [y[None, :, :, None], uv[None]]
    if kind.startswith("NV12"):
        return [image.bgr_to_nv12(bgr, range=rng)[None, :, :, None]]
    return [{"YUV444": image.bgr_to_yuv444(bgr), "RGB": bgr[..., ::-1].copy(), "BGR": bgr}[kind][None]]


# (the spec's image type, the emulator's format of the same frames, the conversion)
IMAGE_CASES = ([("y/uv pair", "nv12_planes", CONVERSION), ("y/uv pair", "nv12_planes", VIDEO_BGR)] if HBM else
               [("NV12", "nv12", CONVERSION), ("NV12_SEPARATE", "nv12", CONVERSION), ("NV12", "nv12", VIDEO_BGR),
                ("YUV444", "yuv444", CONVERSION), ("RGB", "rgb", CONVERSION), ("BGR", "bgr", CONVERSION)])


def _emulator_outputs(onnx_bytes, image_inputs, feeds):
    """The emulator's outputs for the same model compiled with the same image inputs."""
    from accel import compiler

    accm = compiler.compile_model(onnx_bytes, int8=INT8_RULES["bpu"], image_inputs=image_inputs)
    with accel.open("emu") as emu:
        return [np.asarray(o).copy() for o in emu.load(accm).run(feeds)]


@pytest.mark.parametrize("kind, fmt, conversion", IMAGE_CASES)
def test_image_model_equals_the_emulator(dev, tmp_path, kind, fmt, conversion):
    onnx_bytes = _conv_onnx()
    spec_type = "NV12" if kind == "y/uv pair" else kind
    model = dev.load(str(_packed_file(tmp_path, onnx_bytes, {"inputs": {"images": {"type": spec_type,
                                                                                   **conversion}}})))
    feeds = _feeds(kind, conversion)
    if kind == "y/uv pair":
        assert [i.name for i in model.inputs] == ["images_y", "images_uv"]
    else:
        assert model.inputs[0].shape == feeds[0].shape and model.inputs[0].dtype == np.uint8
    got = [np.asarray(o) for o in model.run(feeds)]
    want = _emulator_outputs(onnx_bytes, {"images": {"format": fmt, **conversion}}, feeds)
    assert len(got) == len(want) == 1 and got[0].shape == (1, 4, H, W)
    np.testing.assert_array_equal(got[0], want[0])
    assert np.count_nonzero(want[0]) > want[0].size // 4  # the model computed something
    # The frames as accel.image makes them (without the axes of size 1) are taken as they are.
    squeezed = [np.squeeze(f) for f in feeds]
    np.testing.assert_array_equal(np.asarray(model.run(squeezed)[0]), want[0])


def test_onnx_loaded_with_image_inputs_is_packed_as_the_vendor_toolchain_would(dev, tmp_path):
    """Device.load(onnx, image_inputs=...) on bpu:0 goes through the stand-in's toolchain
    (standin_toolchain.py): the frame becomes libdnn's NV12 type, or S100's y/uv pair."""
    path = tmp_path / "conv.onnx"
    path.write_bytes(_conv_onnx())
    kind, fmt = ("y/uv pair", "nv12_planes") if HBM else ("NV12", "nv12")
    request = {"images": {"format": fmt, **CONVERSION}}
    model = dev.load(str(path), image_inputs=request)
    feeds = _feeds(kind, CONVERSION)
    assert [(i.dtype, i.shape) for i in model.inputs] == [(np.uint8, f.shape) for f in feeds]
    want = _emulator_outputs(path.read_bytes(), request, feeds)
    np.testing.assert_array_equal(np.asarray(model.run(feeds)[0]), want[0])


# ---------------------------------------------------------------------------------------------------
# models the driver refuses
# ---------------------------------------------------------------------------------------------------

def test_nv12_of_odd_size_is_refused_naming_input_and_size(dev):
    if HBM:
        planes = {"images_y": (1, 5, 6, 1), "images_uv": (1, 3, 3, 2)}
        spec = {"inputs": {"images_y": {"type": "U8", "stride": [-1, -1, 1, 1]},
                           "images_uv": {"type": "U8", "stride": [-1, -1, 2, 1]}}}
        with pytest.raises(accel.ModelFormatError,
                           match=r"'images_y' \(1, 5, 6, 1\) and 'images_uv' \(1, 3, 3, 2\).*even width"):
            dev.load(_pack(_frame_accm(planes), spec))
        return
    # The stand-in loads it (its UV plane rounded up: 5 + 3 rows); hb_mapper would not make it.
    data = _pack(_frame_accm({"images": (1, 8, 6, 1)}), {"inputs": {"images": {"type": "NV12",
                                                                                "valid": [1, 3, 5, 6]}}})
    with pytest.raises(accel.ModelFormatError, match=r"input 'images'.*6 x 5 \(W x H\).*even width and height"):
        dev.load(data)


# ---------------------------------------------------------------------------------------------------
# a real detector on a camera frame
# ---------------------------------------------------------------------------------------------------

def _example(name):
    import importlib.util

    path = Path(__file__).resolve().parents[3] / "examples" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(f"example_{name}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_ppocr_detector_on_an_nv12_frame_through_the_driver(dev):
    """examples/nv12_detector.py through bpu:0: PP-OCR's text detector packed with an NV12 input (S100: the y/uv
    pair) by the stand-in toolchain, fed a camera frame made by accel.image: the emulator's answer bit for bit, and
    the text boxes the float detector finds on the original picture (edges within 2 px)."""
    from accel.models import ppocr

    detector = _example("nv12_detector")
    h, w = detector.PAGE_H, detector.PAGE_W
    bgr = detector.camera_frame("ACCEL 2026")
    fmt = "nv12_planes" if HBM else "nv12"
    request = {"x": {"format": fmt, "to": "bgr", "mean": (detector.MEAN * 255).tolist(),
                     "scale": (1 / (detector.STD * 255)).tolist()}}
    path = ppocr.fetch("ppocr_det")
    model = dev.load(str(path), input_shapes={"x": (1, 3, h, w)}, image_inputs=request)
    y, uv = image.bgr_to_nv12(bgr, planes=True)
    feeds = {"x_y": y, "x_uv": uv} if HBM else {"x": image.join_nv12(y, uv)}
    assert [i.image.format for i in model.inputs] == (["nv12_y", "nv12_uv"] if HBM else ["nv12"])
    (got,) = model.run(feeds)
    with accel.open(f"emu:int8={INT8_RULES['bpu']}") as emu:
        framed = emu.load(str(path), input_shapes={"x": (1, 3, h, w)}, image_inputs=request)
        (want,) = framed.run(feeds)
        plain = emu.load(str(path), input_shapes={"x": (1, 3, h, w)})
        (from_bgr,) = plain.run(detector.normalized(bgr))
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
    boxes, reference = detector.text_boxes(np.asarray(got)[0, 0]), detector.text_boxes(from_bgr[0, 0])
    assert len(boxes) == len(reference) == 2, (boxes, reference)
    assert max(abs(a - b) for p, q in zip(boxes, reference) for a, b in zip(p, q)) <= 2, (boxes, reference)
