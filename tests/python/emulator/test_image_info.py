"""Image inputs (accm minor 4, ABI 1.2): the tensor record's image_format reaches `TensorInfo.image` through
the emulator and the core (format, size, planes, alignment); plain tensors have none; the writer and the
emulator's reader refuse an image record FORMAT.md does not allow, naming the tensor."""
from __future__ import annotations

import struct
from pathlib import Path

import numpy as np
import pytest

import accel
from accel.compiler import accm

pytestmark = pytest.mark.emulator  # .accm files written record by record: the emulator's own format

U8, F32 = accm.dtype_code(np.uint8), accm.dtype_code(np.float32)
NHWC = accm.LAYOUT_NHWC


def image_model(inputs) -> bytes:
    """Each (name, format name, dims) input cast to a float32 output '<name>_f' of its shape."""
    tensors, nodes = [], []
    for name, fmt, dims in inputs:
        tensors.append(accm.Tensor(name, U8, accm.KIND_INPUT, dims, NHWC, image_format=accm.IMAGE_FORMATS[fmt]))
    for k, (name, _fmt, dims) in enumerate(inputs):
        tensors.append(accm.Tensor(f"{name}_f", F32, accm.KIND_OUTPUT, dims, NHWC))
        nodes.append(accm.Node(accm.OPS["cast"], [k], [len(inputs) + k], name=f"cast_{name}"))
    n = len(inputs)
    return accm.write(tensors, nodes, list(range(n)), list(range(n, 2 * n)))


# (inputs, the ImageInfo each input reports): H, W = 4, 6 unless the shape says otherwise.
CASES = {
    "nv12": ([("frame", "nv12", (1, 6, 6, 1))],
             [accel.ImageInfo("nv12", 6, 4, (0, 24), 2, 2)]),
    "nv12_planes": ([("luma", "nv12_y", (1, 4, 6, 1)), ("chroma", "nv12_uv", (1, 2, 3, 2))],
                    [accel.ImageInfo("nv12_y", 6, 4, (0,), 2, 2), accel.ImageInfo("nv12_uv", 6, 4, (0,), 2, 2)]),
    "y": ([("grey", "y", (1, 3, 5, 1))], [accel.ImageInfo("y", 5, 3, (0,), 1, 1)]),
    "yuv444": ([("yuv", "yuv444", (1, 4, 6, 3))], [accel.ImageInfo("yuv444", 6, 4, (0,), 1, 1)]),
    "rgb": ([("rgb", "rgb", (1, 1, 1, 3))], [accel.ImageInfo("rgb", 1, 1, (0,), 1, 1)]),
    "bgr": ([("bgr", "bgr", (1, 4, 6, 3))], [accel.ImageInfo("bgr", 6, 4, (0,), 1, 1)]),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_image_inputs_report_their_format_size_and_planes(dev, case):
    inputs, want = CASES[case]
    data = image_model(inputs)
    assert accm.read(data)["header"]["version_minor"] == 4
    model = dev.load(data)
    assert [i.image for i in model.inputs] == want
    for info, (name, fmt, dims) in zip(model.inputs, inputs):
        assert (info.name, info.shape, info.dtype, info.layout) == (name, dims, np.uint8, "NHWC")
        assert f"(image {fmt} " in str(info)
    assert all(o.image is None for o in model.outputs)
    # An image input is fed as the buffer it describes: the model casts its bytes.
    feeds = [np.arange(np.prod(dims), dtype=np.uint8).reshape(dims) for _, _, dims in inputs]
    outs = model.run(feeds)
    assert len(outs) == len(feeds)
    for got, fed in zip(outs, feeds):
        np.testing.assert_array_equal(got, fed.astype(np.float32))


def test_nv12_uv_plane_offset_is_h_rows_of_the_row_stride(dev):
    image = dev.load(image_model([("frame", "nv12", (1, 12, 8, 1))])).inputs[0].image
    assert image is not None and (image.height, image.width, image.plane_offsets) == (8, 8, (0, 64))


def test_plain_models_have_no_image(dev, tiny):
    assert all(t.image is None for t in [*tiny.inputs, *tiny.outputs])
    assert "image" not in str(tiny.inputs[0])


def test_a_model_without_images_is_written_as_before():
    data = accm.write([accm.Tensor("x", U8, accm.KIND_INPUT, (1, 4, 4, 1), NHWC),
                       accm.Tensor("y", F32, accm.KIND_OUTPUT, (1, 4, 4, 1), NHWC)],
                      [accm.Node(accm.OPS["cast"], [0], [1])], [0], [1])
    parsed = accm.read(data)
    assert parsed["header"]["version_minor"] == 1
    assert [t["image_format"] for t in parsed["tensors"]] == [0, 0]


def test_read_gives_the_image_format_back():
    parsed = accm.read(image_model(CASES["nv12_planes"][0]))
    assert [t["image_format_name"] for t in parsed["tensors"]] == ["nv12_y", "nv12_uv", "none", "none"]
    assert [t["image_format"] for t in parsed["tensors"]] == [2, 3, 0, 0]
    assert accm.IMAGE_FORMAT_NAMES[accm.IMAGE_FORMATS["bgr"]] == "bgr"


# ---- bad records: the writer refuses them, and so does the emulator's reader when a file holds one ----

def _patched(data: bytes, tensor: int, image_format: int, minor: int = 4) -> bytes:
    """`data` with tensor record `tensor`'s u32 at offset 116 set and the header's minor set."""
    out = bytearray(data)
    struct.pack_into("<H", out, 6, minor)
    table = struct.unpack_from("<Q", out, 48)[0]
    struct.pack_into("<I", out, table + 128 * tensor + 116, image_format)
    return bytes(out)


def _plain(inputs, dtype=U8, layout=NHWC):
    """Like image_model, every input plain (and of `dtype`, `layout`): the base the bad records patch."""
    tensors = [accm.Tensor(name, dtype, accm.KIND_INPUT, dims, layout) for name, _, dims in inputs]
    n = len(inputs)
    tensors += [accm.Tensor(f"{name}_f", F32, accm.KIND_OUTPUT, dims, layout) for name, _, dims in inputs]
    nodes = [accm.Node(accm.OPS["cast"], [k], [n + k]) for k in range(n)]
    return accm.write(tensors, nodes, list(range(n)), list(range(n, 2 * n)))


NV12 = accm.IMAGE_FORMATS["nv12"]
BAD = {
    # name: (inputs, base dtype, base layout, {tensor index: image_format}, the tensor named, message)
    "unknown": ([("frame", None, (1, 6, 4, 1))], U8, NHWC, {0: 8}, "frame", "image_format 8 .*unknown"),
    "on_an_output": ([("frame", None, (1, 6, 4, 1))], U8, NHWC, {1: NV12}, "frame_f", "kind 2"),
    "float32": ([("frame", None, (1, 6, 4, 1))], F32, NHWC, {0: NV12}, "frame", "uint8"),
    "nchw": ([("frame", None, (1, 6, 4, 1))], U8, accm.LAYOUT_NCHW, {0: NV12}, "frame", "NHWC"),
    "batch_2": ([("frame", None, (2, 6, 4, 1))], U8, NHWC, {0: NV12}, "frame", r"shape \(1, rows"),
    "rgb_of_1_channel": ([("frame", None, (1, 4, 4, 1))], U8, NHWC, {0: accm.IMAGE_FORMATS["rgb"]}, "frame",
                         r"\(1, rows, columns, 3\)"),
    "nv12_rows": ([("frame", None, (1, 5, 4, 1))], U8, NHWC, {0: NV12}, "frame", "multiple of 3"),
    "nv12_odd_width": ([("frame", None, (1, 6, 5, 1))], U8, NHWC, {0: NV12}, "frame", "even height and width"),
    "nv12_y_odd_height": ([("luma", None, (1, 3, 6, 1)), ("chroma", None, (1, 2, 3, 2))], U8, NHWC, {0: 2, 1: 3},
                          "luma", "even height and width"),
    "nv12_uv_too_small": ([("luma", None, (1, 1, 1, 1)), ("chroma", None, (1, 1, 1, 2))], U8, NHWC, {0: 2, 1: 3},
                          "luma", "even height and width"),
    "y_alone": ([("luma", None, (1, 4, 6, 1))], U8, NHWC, {0: 2}, "luma", "not followed by its nv12_uv"),
    "uv_alone": ([("chroma", None, (1, 2, 3, 2))], U8, NHWC, {0: 3}, "chroma", "does not follow an nv12_y"),
    "uv_first": ([("chroma", None, (1, 2, 3, 2)), ("luma", None, (1, 4, 6, 1))], U8, NHWC, {0: 3, 1: 2},
                 "chroma", "does not follow an nv12_y"),
    "pair_sizes_differ": ([("luma", None, (1, 4, 6, 1)), ("chroma", None, (1, 2, 2, 2))], U8, NHWC, {0: 2, 1: 3},
                          "chroma", "match"),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_image_records_are_refused_naming_the_tensor(dev, case):
    inputs, dtype, layout, formats, tensor, message = BAD[case]
    data = _plain(inputs, dtype, layout)
    for index, fmt in formats.items():
        data = _patched(data, index, fmt)
    with pytest.raises(accel.ModelFormatError, match=f"'{tensor}'.*{message}"):
        dev.load(data)
    # The writer refuses to write it in the first place.
    tensors = [accm.Tensor(t["name"], t["dtype"], t["kind"], t["dims"], t["layout"], image_format=t["image_format"])
               for t in accm.read(data)["tensors"]]
    n = len(inputs)
    with pytest.raises(ValueError, match=f"'{tensor}'.*{message}"):
        accm.write(tensors, [accm.Node(accm.OPS["cast"], [k], [n + k]) for k in range(n)], list(range(n)),
                   list(range(n, 2 * n)))


def test_image_format_is_reserved_before_minor_4(dev):
    data = _patched(_plain([("frame", None, (1, 6, 4, 1))]), 0, NV12, minor=3)
    with pytest.raises(accel.ModelFormatError, match=r"'frame'.*reserved field at offset 116 is 1"):
        dev.load(data)


def test_format_codes_are_accel_h_s():
    """One table of accel_image_format's codes in Python (accel.image.IMAGE_FORMATS: TensorInfo.image and the .accm
    writer both use it), held equal to the header's enum."""
    import re

    import accel.image

    header = (Path(accel.__file__).resolve().parent / "include" / "accel" / "accel.h").read_text()
    enum = {name.lower(): int(code) for name, code in re.findall(r"ACCEL_IMAGE_(\w+) = (\d+)", header)}
    assert enum == accel.image.IMAGE_FORMATS
    assert accm.IMAGE_FORMATS is accel.image.IMAGE_FORMATS
