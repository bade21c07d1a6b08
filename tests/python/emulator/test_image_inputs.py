"""Camera frames as model inputs on the emulator: Device.load(image_inputs=...) and accel compile --image-input.

The claim tested: a frame fed to a model compiled with an image input gives what converting the frame with
accel.image (the one definition of the formula) and feeding the float model gives. Through an identity model the
conversion itself is compared value by value (the counts printed with -s); through a conv model and a QDQ model
the outputs, against onnxruntime (float) and against the emulator's own float path (int8, bit for bit).
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from conftest import run_main
from onnx import TensorProto, helper, numpy_helper

import accel
import accel.image as image
from accel.compiler import accm

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from models import quantized

H, W = 24, 40
MEAN = (123.675, 116.28, 103.53)
SCALE = (1 / 58.395, 1 / 57.12, 1 / 57.375)
F = TensorProto.FLOAT


def onnx_model(nodes, inputs, outputs, inits=()):
    graph = helper.make_graph(nodes, "g", inputs, outputs, list(inits))
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


@pytest.fixture(scope="module")
def emu():
    with accel.Device("emu:cores=1") as d:
        yield d


def identity_model(channels=3, layout="NCHW", h=H, w=W):
    shape = [1, channels, h, w] if layout == "NCHW" else [1, h, w, channels]
    return onnx_model([helper.make_node("Identity", ["images"], ["out"])],
                      [helper.make_tensor_value_info("images", F, shape)],
                      [helper.make_tensor_value_info("out", F, shape)])


def conv_model(h=H, w=W):
    rng = np.random.default_rng(3)
    weight = numpy_helper.from_array((rng.standard_normal((8, 3, 3, 3)) * 0.2).astype(np.float32), "w")
    return onnx_model([helper.make_node("Conv", ["images", "w"], ["c"], pads=[1, 1, 1, 1]),
                       helper.make_node("Relu", ["c"], ["out"])],
                      [helper.make_tensor_value_info("images", F, [1, 3, h, w])],
                      [helper.make_tensor_value_info("out", F, [1, 8, h, w])], [weight])


def picture(seed=0, h=H, w=W):
    """A BGR picture with flat 2x2 blocks on the left half (NV12 keeps their colour) and noise on the right."""
    rng = np.random.default_rng(seed)
    bgr = rng.integers(0, 256, (h, w, 3), dtype=np.uint8)
    blocks = rng.integers(0, 256, (h // 2, w // 4, 3), dtype=np.uint8)
    bgr[:, : w // 2] = blocks.repeat(2, 0).repeat(2, 1)
    return bgr


def frame_feeds(fmt, bgr, range_="full", name="images"):
    """The frame feeds of `fmt` and the BGR picture accel.image says the frame stands for."""
    if fmt in ("nv12", "nv12_planes"):
        y, uv = image.bgr_to_nv12(bgr, range=range_, planes=True)
        seen = image.nv12_to_bgr((y, uv), range=range_)
        if fmt == "nv12":
            return {name: image.join_nv12(y, uv)}, seen
        return {f"{name}_y": y, f"{name}_uv": uv}, seen
    if fmt == "yuv444":
        yuv = image.bgr_to_yuv444(bgr)
        return {name: yuv}, image.yuv444_to_bgr(yuv)
    if fmt == "rgb":
        return {name: np.ascontiguousarray(bgr[:, :, ::-1])}, bgr
    return {name: bgr}, bgr


def normalized(bgr, to, mean=MEAN, scale=SCALE, layout="NCHW"):
    pixels = bgr if to == "bgr" else bgr[:, :, ::-1]
    x = (pixels.astype(np.float32) - np.float32(mean)) * np.float32(scale)
    return (x.transpose(2, 0, 1) if layout == "NCHW" else x)[None].astype(np.float32)


def differing_levels(got, want, scale=SCALE, layout="NCHW"):
    """(elements differing, the largest difference in pixel levels) of normalized tensors."""
    axis = 1 if layout == "NCHW" else 3
    shape = [1, 1, 1, 1]
    shape[axis] = 3
    levels = np.abs(got.astype(np.float64) - want) / np.asarray(scale).reshape(shape)
    return int(np.count_nonzero(levels > 1e-3)), float(levels.max())


@pytest.mark.parametrize("fmt", ["nv12", "nv12_planes", "yuv444", "rgb", "bgr"])
@pytest.mark.parametrize("to", ["rgb", "bgr"])
def test_the_conversion_is_accel_image_s(emu, tmp_path, fmt, to):
    path = tmp_path / "identity.onnx"
    onnx.save(identity_model(), path)
    model = emu.load(path, image_inputs={"images": {"format": fmt, "to": to, "mean": MEAN, "scale": SCALE}})
    bgr = picture()
    feeds, seen = frame_feeds(fmt, bgr)
    (got,) = model.run(feeds)
    want = normalized(seen, to)
    differ, worst = differing_levels(got, want)
    print(f"\n{fmt} -> {to}: {differ} of {got.size} values differ from accel.image's conversion, "
          f"by at most {worst:.4f} levels")
    assert worst < 1.001 and differ <= got.size // 1000  # float32 against float64 at an exact half: rare, 1 level
    np.testing.assert_allclose(got, want, atol=1.001 / 57.12 if differ else 2e-5)


@pytest.mark.parametrize("range_", ["full", "video", "regular", "bt601_video"])
def test_nv12_ranges(emu, tmp_path, range_):
    path = tmp_path / "identity.onnx"
    onnx.save(identity_model(), path)
    model = emu.load(path, image_inputs={"images": {"format": "nv12", "range": range_}})
    feeds, seen = frame_feeds("nv12", picture(1), range_)
    (got,) = model.run(feeds)
    differ, worst = differing_levels(got, normalized(seen, "rgb", 0.0, 1.0), scale=(1.0, 1.0, 1.0))
    print(f"\nnv12 {range_}: {differ} of {got.size} values differ, by at most {worst:.4f} levels")
    assert worst < 1.001 and differ <= got.size // 1000


def test_nhwc_model_and_grey(emu, tmp_path):
    path = tmp_path / "nhwc.onnx"
    onnx.save(identity_model(layout="NHWC"), path)
    model = emu.load(path, image_inputs={"images": {"format": "bgr", "to": "rgb", "mean": 10, "scale": 0.5}})
    bgr = picture(2)
    (got,) = model.run({"images": bgr})
    np.testing.assert_array_equal(got, normalized(bgr, "rgb", 10.0, 0.5, layout="NHWC"))
    grey = tmp_path / "grey.onnx"
    onnx.save(identity_model(channels=1), grey)
    model = emu.load(grey, image_inputs={"images": {"format": "y", "mean": [128], "scale": [1 / 128]}})
    y = image.bgr_to_y(bgr)
    (got,) = model.run(y)
    np.testing.assert_array_equal(got, ((y.astype(np.float32) - 128) * np.float32(1 / 128))[None, None])


@pytest.mark.parametrize("fmt", ["nv12", "nv12_planes", "bgr"])
def test_conv_model_against_onnxruntime(emu, tmp_path, fmt):
    import onnxruntime as ort

    path = tmp_path / "conv.onnx"
    onnx.save(conv_model(), path)
    model = emu.load(path, image_inputs={"images": {"format": fmt, "to": "bgr", "mean": MEAN, "scale": SCALE}})
    feeds, seen = frame_feeds(fmt, picture(4))
    (got,) = model.run(feeds)
    (want,) = ort.InferenceSession(str(path)).run(None, {"images": normalized(seen, "bgr")})
    np.testing.assert_allclose(got, want, atol=1e-4, rtol=1e-4)


@pytest.mark.parametrize("rules", ["ort", "bpu"])
def test_quantized_model_takes_frames_bit_for_bit(tmp_path, rules):
    """A QDQ model with an NV12 input computes the integers its float input would give: its outputs equal, bit for
    bit, the emulator's run of the same QDQ model on the frame converted by accel.image."""
    path = quantized.static_model("tiny_cnn", activation="int8", symmetric=True)
    h, w = 64, 64
    bgr = picture(5, h, w)
    feeds, seen = frame_feeds("nv12", bgr, name="image")
    with accel.Device(f"emu:cores=1,int8={rules}") as d:
        framed = d.load(path, image_inputs={"image": {"format": "nv12", "to": "rgb", "mean": MEAN, "scale": SCALE}})
        plain = d.load(path)
        got = framed.run(feeds)
        want = plain.run(normalized(seen, "rgb"))
    for g, x in zip(got, want):
        differ = int(np.count_nonzero(g != x))
        print(f"\nint8={rules}: {differ} of {g.size} output values differ from the float path's")
        np.testing.assert_array_equal(g, x)


def test_frames_in_their_own_shapes_and_buffers(emu, tmp_path):
    path = tmp_path / "identity.onnx"
    onnx.save(identity_model(), path)
    model = emu.load(path, image_inputs={"images": "nv12"})
    bgr = picture(6)
    nv12 = image.bgr_to_nv12(bgr)
    (want,) = model.run(nv12[None, :, :, None])
    for given in (nv12, nv12.tobytes(), bytearray(nv12.tobytes()), memoryview(nv12)):
        (got,) = model.run(given)
        np.testing.assert_array_equal(got, want)
        (got,) = model.run({"images": given})
        np.testing.assert_array_equal(got, want)
    with pytest.raises(accel.ShapeError, match=r"'images'.*nv12 frame of 40x24.*1440 bytes.*got a buffer of 1439"):
        model.run(nv12.tobytes()[:-1])
    with pytest.raises(accel.ShapeError, match=r"'images': expected a nv12 frame of 40x24.*got \(24, 40\)"):
        model.run(nv12[:H])
    with pytest.raises(accel.DTypeError):
        model.run(nv12.astype(np.float32))
    planes = emu.load(path, image_inputs={"images": "nv12_planes"})
    y, uv = image.split_nv12(nv12)
    (got,) = planes.run({"images_y": y, "images_uv": uv})
    np.testing.assert_array_equal(got, want)


def test_tensor_info_says_what_frame_to_give(emu, tmp_path):
    path = tmp_path / "identity.onnx"
    onnx.save(identity_model(), path)
    cases = {"nv12": [("images", "nv12", (1, 36, 40, 1), (0, H * W))],
             "nv12_planes": [("images_y", "nv12_y", (1, 24, 40, 1), (0,)),
                             ("images_uv", "nv12_uv", (1, 12, 20, 2), (0,))],
             "yuv444": [("images", "yuv444", (1, 24, 40, 3), (0,))],
             "rgb": [("images", "rgb", (1, 24, 40, 3), (0,))],
             "bgr": [("images", "bgr", (1, 24, 40, 3), (0,))]}
    for fmt, expected in cases.items():
        model = emu.load(path, image_inputs={"images": fmt})
        assert [(i.name, i.image.format, i.shape, i.image.plane_offsets) for i in model.inputs] == expected
        for info in model.inputs:
            assert info.dtype == np.uint8 and info.layout == "NHWC"
            assert (info.image.width, info.image.height) == (W, H)
            align = 2 if fmt.startswith("nv12") else 1
            assert (info.image.width_align, info.image.height_align) == (align, align)
        assert model.outputs[0].image is None


def test_accm_records_the_frame(tmp_path):
    data = accel.compiler.compile_model(identity_model(), image_inputs={"images": {"format": "nv12"}})
    tables = accm.read(data)
    by_name = {t["name"]: t for t in tables["tensors"]}
    assert by_name["images"]["image_format"] == accm.IMAGE_FORMATS["nv12"]
    assert by_name["images"]["layout"] == accm.LAYOUT_NHWC and tuple(by_name["images"]["dims"]) == (1, 36, 40, 1)
    assert by_name["out"]["image_format"] == 0
    plain = accm.read(accel.compiler.compile_model(identity_model()))
    assert plain["header"]["version_minor"] < tables["header"]["version_minor"]


@pytest.mark.parametrize("spec, error, words", [
    ({"picture": "nv12"}, accel.InvalidArgumentError, r"image_inputs names 'picture', which is not an input.*'images'"),
    ({"images": "nv21"}, ValueError, r"format 'nv21': expected one of nv12, nv12_planes, y, yuv444, rgb, bgr"),
    ({"images": {"format": "nv12", "to": "yuv"}}, ValueError, r"to='yuv': expected 'rgb' or 'bgr'"),
    ({"images": {"format": "nv12", "range": "studio"}}, ValueError, r"range='studio'"),
    ({"images": {"format": "nv12", "mean": [1, 2]}}, ValueError, r"mean=\[1, 2\]: expected one number or three"),
    ({"images": {"format": "nv12", "gamma": 2}}, ValueError, r"unknown key 'gamma'"),
    ({"images": {"format": "y"}}, accel.InvalidArgumentError, r"the input has 3 channels.*a y frame gives 1"),
    ({"images": ["nv12"]}, TypeError, r"image_inputs\['images'\] must be a dict"),
    # every option checked where the request is parsed, naming the input, the option and what it takes
    ({"images": {"format": "nv12", "scale": 1e39}}, accel.InvalidArgumentError,
     r"image_inputs\['images'\]: scale=1e\+39: 1e\+39 is not a finite float32 \(expected within \+-3.4028235e\+38\)"),
    ({"images": {"format": "nv12", "mean": [0, -1e39, 0]}}, accel.InvalidArgumentError,
     r"mean=\[0, -1e\+39, 0\]: -1e\+39 is not a finite float32"),
    ({"images": {"format": "nv12", "scale": float("inf")}}, accel.InvalidArgumentError,
     r"scale=inf: inf is not a finite"),
    ({"images": {"format": "nv12", "mean": float("nan")}}, accel.InvalidArgumentError,
     r"mean=nan: nan is not a finite"),
    ({"images": {"format": "nv12", "scale": 0}}, accel.InvalidArgumentError,
     r"scale=0: 0.0 is 0 in float32 \(expected a nonzero scale, at least 1.4012985e-45 in magnitude\)"),
    ({"images": {"format": "nv12", "scale": [1, 1e-50, 1]}}, accel.InvalidArgumentError, r"1e-50 is 0 in float32"),
    ({"images": {"format": "nv12", "scale": 1e37}}, accel.InvalidArgumentError,
     r"mean=0.0 and scale=1e\+37 take pixel levels 0..255 past float32's range"),
    ({"images": {"format": "nv12", "mean": 3e38, "scale": -2.0}}, accel.InvalidArgumentError,
     r"mean=3e\+38 and scale=-2.0 take pixel levels 0..255 past float32's range"),
    ({"images": {"format": "nv12", "mean": object()}}, accel.InvalidArgumentError,
     r"mean=<object .*>: expected one number or three \(one per channel\); <object .*> \(object\) is not a number"),
    ({"images": {"format": "nv12", "scale": True}}, accel.InvalidArgumentError,
     r"scale=True: .*True \(bool\) is not a number"),
    ({"images": {"format": "nv12", "mean": [1, "2", 3]}}, accel.InvalidArgumentError, r"'2' \(str\) is not a number"),
    ({"images": {"format": "nv12", "mean": np.array([True, False, True])}}, accel.InvalidArgumentError,
     r"\(bool_?\) is not a number"),
    ({"images": {"format": "nv12", "mean": "0"}}, accel.InvalidArgumentError,
     r"mean='0': expected one number or three"),
    ({"images": {"format": "nv12", "mean": []}}, accel.InvalidArgumentError,
     r"mean=\[\]: expected one number or three"),
    ({"images": {"format": "nv12", "mean": [[1, 2, 3]]}}, accel.InvalidArgumentError, r"is not a number"),
    ({"images": {"format": "nv12", "mean": [1, 2, 3, 4]}}, accel.InvalidArgumentError,
     r"mean=\[1, 2, 3, 4\]: expected"),
    ({"images": {"format": "y", "mean": [1, 2, 3]}}, accel.InvalidArgumentError,
     r"mean=\[1, 2, 3\]: expected one number \(a y frame has one channel\)"),
    ({"images": {"format": "nv12", "range": object()}}, accel.InvalidArgumentError,
     r"range=<object .*>: expected one of"),
    ({"images": {"format": "nv12", "layout": ["NCHW"]}}, accel.InvalidArgumentError, r"layout=\['NCHW'\]: expected"),
    ({"images": {"format": "nv12", "to": 3}}, accel.InvalidArgumentError, r"to=3: expected 'rgb' or 'bgr'"),
    ({"images": {"format": None}}, accel.InvalidArgumentError, r"format None: expected one of"),
    ({"images": {"format": "nv12", "gamma": 2, "alpha": object()}}, accel.InvalidArgumentError, r"unknown key 'alpha'"),
])
def test_bad_requests(emu, tmp_path, spec, error, words):
    path = tmp_path / "identity.onnx"
    onnx.save(identity_model(), path)
    with pytest.raises(error, match=words):
        emu.load(path, image_inputs=spec)


def test_numbers_of_every_kind_and_the_float32_extremes_load(emu, tmp_path):
    """NumPy numbers and arrays, ints, and a scale as small as float32 holds give the normalization asked for."""
    path = tmp_path / "identity.onnx"
    onnx.save(identity_model(), path)
    bgr = picture(9)
    frame = image.bgr_to_nv12(bgr)
    for mean, scale in ((np.array(MEAN), np.float32(SCALE[0])), ([np.int64(120), 116.5, np.float32(100.0)], 2),
                        (0, 1e-40), (128, [1, np.float64(-1.0), 3])):
        model = emu.load(path, image_inputs={"images": {"format": "nv12", "mean": mean, "scale": scale}})
        (got,) = model.run(frame)
        want = normalized(image.nv12_to_bgr(frame), "rgb", np.asarray(mean, np.float64),
                          np.asarray(scale, np.float64))
        assert np.all(np.isfinite(got))
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-45)


def test_the_compiler_refuses_a_bad_option_as_a_frame_input_error():
    """Where the request is parsed (accel.compiler.frame_inputs.parse): a CompileError, before any work."""
    for options, words in (({"format": "nv12", "mean": object()}, r"mean=<object .*> \(object\) is not a number"),
                           ({"format": "nv12", "scale": 1e39}, r"scale=1e\+39: 1e\+39 is not a finite float32")):
        with pytest.raises(accel.compiler.FrameInputError, match=r"image_inputs\['images'\]: " + words):
            accel.compiler.compile_model(identity_model(), image_inputs={"images": options})


def test_cli_refuses_a_normalization_past_float32(capsys, tmp_path):
    path = tmp_path / "identity.onnx"
    onnx.save(identity_model(), path)
    for option, words in (("images=nv12,scale=1e39", "scale=[1e+39]: 1e+39 is not a finite float32"),
                          ("images=nv12,scale=0,1,1", "scale=[0.0, 1.0, 1.0]: 0.0 is 0 in float32"),
                          ("images=nv12,mean=1,2", "mean=[1.0, 2.0]: expected one number or three")):
        for verb in (("compile", path, "-o", tmp_path / "x.accm"), ("bench", path, "--runs", "1")):
            code, out, err = run_main(capsys, *verb, "--image-input", option)
            assert code == 1 and f"image_inputs['images']: {words}" in out + err, (verb, out + err)
    assert not (tmp_path / "x.accm").exists()


def test_models_that_cannot_take_a_frame(emu, tmp_path):
    odd = tmp_path / "odd.onnx"
    onnx.save(identity_model(h=23), odd)
    with pytest.raises(accel.InvalidArgumentError, match=r"NV12 needs an even height and width.*not 23x40"):
        emu.load(odd, image_inputs={"images": "nv12"})
    emu.load(odd, image_inputs={"images": "bgr"})  # other formats have no 4:2:0 rule
    ints = tmp_path / "ints.onnx"
    onnx.save(onnx_model([helper.make_node("Identity", ["images"], ["out"])],
                         [helper.make_tensor_value_info("images", TensorProto.INT32, [1, 3, H, W])],
                         [helper.make_tensor_value_info("out", TensorProto.INT32, [1, 3, H, W])]), ints)
    with pytest.raises(accel.InvalidArgumentError, match=r"the input is int32; a frame can replace a float32 input"):
        emu.load(ints, image_inputs={"images": "nv12"})
    flat = tmp_path / "flat.onnx"
    onnx.save(onnx_model([helper.make_node("Identity", ["images"], ["out"])],
                         [helper.make_tensor_value_info("images", F, [1, 3 * H * W])],
                         [helper.make_tensor_value_info("out", F, [1, 3 * H * W])]), flat)
    with pytest.raises(accel.InvalidArgumentError, match=r"\(1, 2880\) is not a static 4-D image shape"):
        emu.load(flat, image_inputs={"images": "rgb"})
    accm_bytes = accel.compiler.compile_model(identity_model())
    with pytest.raises(accel.InvalidArgumentError, match="image_inputs applies to ONNX models only"):
        emu.load(accm_bytes, image_inputs={"images": "nv12"})


def test_symbolic_sizes_from_input_shapes(emu, tmp_path):
    m = identity_model()
    for vi in (*m.graph.input, *m.graph.output):
        vi.type.tensor_type.shape.dim[2].dim_param = "h"
        vi.type.tensor_type.shape.dim[3].dim_param = "w"
    path = tmp_path / "symbolic.onnx"
    onnx.save(m, path)
    with pytest.raises(accel.InvalidArgumentError, match=r"\(1, 3, \?, \?\) is not a static 4-D image shape"):
        emu.load(path, image_inputs={"images": "nv12"})
    model = emu.load(path, input_shapes={"images": (1, 3, 16, 32)}, image_inputs={"images": "nv12"})
    assert model.inputs[0].shape == (1, 24, 32, 1)


def test_compile_cache_keys_on_the_request(emu, tmp_path):
    path = tmp_path / "identity.onnx"
    onnx.save(identity_model(), path)
    a = emu.load(path, image_inputs={"images": {"format": "nv12", "range": "full"}})
    b = emu.load(path, image_inputs={"images": {"format": "nv12", "range": "video"}})
    c = emu.load(path)
    frame = image.bgr_to_nv12(picture(7))
    assert not np.array_equal(a.run(frame)[0], b.run(frame)[0])
    assert c.inputs[0].dtype == np.float32


def test_cli_compile_run_and_bench_with_a_picture(capsys, tmp_path):
    from PIL import Image

    path = tmp_path / "conv.onnx"
    onnx.save(conv_model(), path)
    bgr = picture(8)
    png = tmp_path / "frame.png"
    Image.fromarray(np.ascontiguousarray(bgr[:, :, ::-1])).save(png)
    option = "images=nv12,to=bgr,mean=123.675,116.28,103.53,scale=0.0171,0.0175,0.0174"
    compiled = tmp_path / "conv.accm"
    code, out, _ = run_main(capsys, "compile", str(path), "-o", str(compiled), "--image-input", option)
    assert code == 0, out
    saved = tmp_path / "out.npz"
    code, out, err = run_main(capsys, "run", str(compiled), "--input", f"images={png}", "--output", str(saved))
    assert code == 0, out + err
    with accel.Device("emu") as d:
        model = d.load(path, image_inputs={"images": {"format": "nv12", "to": "bgr", "mean": MEAN,
                                                      "scale": [0.0171, 0.0175, 0.0174]}})
        (want,) = model.run(image.bgr_to_nv12(bgr))
    np.testing.assert_array_equal(np.load(saved)["out"], want)
    code, out, err = run_main(capsys, "run", str(path), "--image-input", option, "--input", str(png))
    assert code == 0 and "out: shape (1, 8, 24, 40)" in out, out + err
    code, out, err = run_main(capsys, "bench", str(path), "--image-input", option, "--input", f"images={png}",
                              "--runs", "2")
    assert code == 0 and "latency" in out, out + err
    # A float input given a picture and no --image-input takes it as accel batch takes one: RGB scaled to [0, 1].
    for verb, extra in (("run", ["--output", str(saved)]), ("bench", ["--runs", "1"])):
        code, out, err = run_main(capsys, verb, str(path), "--input", f"images={png}", *extra)
        assert code == 0, out + err
        assert (f"accel {verb}: input 'images' takes pictures as RGB scaled to [0, 1] (--image-input "
                f"images=rgb,scale=0.0039215686); give --image-input to choose") in err, err
    with accel.Device("emu") as d:
        model = d.load(path, image_inputs={"images": {"format": "rgb", "scale": [1 / 255]}})
        (want,) = model.run(image.to_frame(bgr, "rgb").reshape(model.inputs[0].shape))
    np.testing.assert_array_equal(np.load(saved)["out"], want)
    # A compiled model's inputs are as it was compiled: a float one takes arrays only.
    plain = tmp_path / "plain.accm"
    assert run_main(capsys, "compile", str(path), "-o", str(plain))[0] == 0
    code, out, err = run_main(capsys, "run", str(plain), "--input", f"images={png}")
    assert code == 1 and "input 'images' is not an image input" in out + err
    code, out, err = run_main(capsys, "compile", str(path), "-o", str(compiled), "--image-input", "images=nv12,gamma=2")
    assert code == 2 and "unknown key 'gamma'" in err


def test_read_image_resizes_to_the_model(tmp_path):
    from PIL import Image

    png = tmp_path / "big.png"
    Image.fromarray(np.full((48, 80, 3), (10, 20, 30), np.uint8)).save(png)
    bgr = image.read_image(png, size=(W, H))
    assert bgr.shape == (H, W, 3) and bgr[0, 0].tolist() == [30, 20, 10]
    with pytest.raises(FileNotFoundError, match="no such picture file"):
        image.read_image(tmp_path / "missing.png")
    bad = tmp_path / "bad.png"
    bad.write_bytes(b"not a picture")
    with pytest.raises(ValueError, match=r"cannot read .* as a picture"):
        image.read_image(bad)

