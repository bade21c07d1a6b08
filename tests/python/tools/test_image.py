"""accel.image: the frame layouts, the BT.601 formulas in both ranges, and their agreement with OpenCV.

OpenCV (opencv-python-headless, in the test extra) is the independent reference: its fixed-point code
differs from our exact float formula (formula.py) by at most 1 per element, in the cases below; each
comparison prints how many elements differ. Which OpenCV conversion is which of ours:
  COLOR_BGR2YUV_I420 (Y)          video range, Y                       |diff| <= 1
  COLOR_BGR2YUV_I420 (U, V)       video range, but the top-left pixel of each 2x2 block, not the mean:
                                  equal to ours (<= 1) on images whose 2x2 blocks are flat
  COLOR_YUV2BGR_NV12              video range, nearest upsampling;     |diff| <= 1 where Y >= 16
                                  (OpenCV clamps Y below 16 to 16 first)
  COLOR_BGR2YCrCb / YCrCb2BGR     full range (JPEG), channels Y, Cr, Cb |diff| <= 1
  COLOR_BGR2GRAY                  full-range Y                         |diff| <= 1
  COLOR_BGR2YUV                   neither: analog YUV, U = 0.492 (B - Y) + 128 (tested to differ)
"""
from __future__ import annotations

import numpy as np
import pytest

import accel.image as image
from accel.image import formula

pytestmark = pytest.mark.emulator

H, W = 48, 64  # even, and not square: a swapped H and W shows


def random_bgr(seed: int = 0, h: int = H, w: int = W) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, 256, (h, w, 3), dtype=np.uint8)


def flat_blocks(bgr: np.ndarray) -> np.ndarray:
    """`bgr` with each 2x2 block one colour (its top-left pixel's): 4:2:0 loses nothing on it."""
    return np.ascontiguousarray(bgr[::2, ::2].repeat(2, axis=0).repeat(2, axis=1))


def differences(name: str, ours: np.ndarray, reference: np.ndarray) -> int:
    """The largest |ours - reference|, printed with how many elements differ."""
    assert ours.shape == reference.shape and ours.dtype == reference.dtype == np.uint8
    diff = np.abs(ours.astype(np.int16) - reference.astype(np.int16))
    print(f"{name}: {np.count_nonzero(diff)} of {diff.size} elements differ, max |diff| {diff.max()}")
    return int(diff.max())


# ---- the formula -------------------------------------------------------------------------------------


@pytest.mark.parametrize("range_", ["full", "video"])
def test_the_inverse_matrix_undoes_the_forward_one(range_):
    forward, f_off = formula.rgb_to_yuv_matrix(range_)
    inverse, i_off = formula.yuv_to_rgb_matrix(range_)
    rgb = np.array([[0.0, 0.0, 0.0], [255.0, 255.0, 255.0], [12.0, 200.0, 77.0]])
    np.testing.assert_allclose((rgb @ forward.T + f_off) @ inverse.T + i_off, rgb, atol=1e-9)


def test_the_matrices_are_bt601_in_both_ranges():
    full, full_offset = formula.rgb_to_yuv_matrix("full")
    # Horizon's reference tables give these to three decimals (0.299 0.587 0.114 / -0.169 -0.331 0.5 / ...).
    np.testing.assert_allclose(full, [[0.299, 0.587, 0.114], [-0.169, -0.331, 0.5], [0.5, -0.419, -0.081]],
                               atol=5e-4)
    np.testing.assert_array_equal(full_offset, [0, 128, 128])
    video, video_offset = formula.rgb_to_yuv_matrix("bt601_video")
    np.testing.assert_allclose(video, [[0.257, 0.504, 0.098], [-0.148, -0.291, 0.439], [0.439, -0.368, -0.071]],
                               atol=5e-4)
    np.testing.assert_array_equal(video_offset, [16, 128, 128])
    # Rows sum to 1 (Y) and 0 (U, V): grey stays grey, at U = V = 128.
    np.testing.assert_allclose(full.sum(axis=1), [1, 0, 0], atol=1e-12)
    # OpenVINO's NV12toRGB decoding constants (video range), to three decimals.
    inverse, _ = formula.yuv_to_rgb_matrix("video")
    np.testing.assert_allclose(inverse, [[1.164, 0, 1.596], [1.164, -0.391, -0.813], [1.164, 2.018, 0]],
                               atol=1e-3)


def test_video_range_spans_16_to_235_and_16_to_240():
    corners = np.array([[[0, 0, 0], [255, 255, 255], [255, 0, 0], [0, 0, 255]]], dtype=np.uint8)
    yuv = image.rgb_to_yuv444(corners, range="video")
    assert yuv[0, 0, 0] == 16 and yuv[0, 1, 0] == 235
    assert yuv[0, 2, 2] == 240 and yuv[0, 3, 1] == 240  # red's V, blue's U: the chroma extremes
    full = image.rgb_to_yuv444(corners)
    assert full[0, 0, 0] == 0 and full[0, 1, 0] == 255 and full[0, 2, 2] == 255 and full[0, 3, 1] == 255


def test_rounding_is_half_up_then_clipped():
    np.testing.assert_array_equal(formula.round_to_uint8([0.5, 1.5, 2.5, 2.4999, -3.0, 255.4, 300.0]),
                                  [1, 2, 3, 2, 0, 255, 255])


def test_range_names_and_a_wrong_one():
    assert formula.canonical_range("regular") == "full" and formula.canonical_range("bt601_video") == "video"
    bgr = random_bgr()
    np.testing.assert_array_equal(image.bgr_to_nv12(bgr, range="regular"), image.bgr_to_nv12(bgr))
    with pytest.raises(ValueError, match=r"range='bt709'"):
        image.bgr_to_nv12(bgr, range="bt709")


# ---- layouts -----------------------------------------------------------------------------------------


def test_nv12_buffer_layout():
    bgr = random_bgr()
    frame = image.bgr_to_nv12(bgr)
    assert frame.shape == (H * 3 // 2, W) and frame.dtype == np.uint8
    y, uv = image.bgr_to_nv12(bgr, planes=True)
    assert y.shape == (H, W) and uv.shape == (H // 2, W // 2, 2)
    np.testing.assert_array_equal(frame[:H], y)
    # Row r of the UV plane: U0 V0 U1 V1 ... (U first).
    np.testing.assert_array_equal(frame[H + 3, 0::2], uv[3, :, 0])
    np.testing.assert_array_equal(frame[H + 3, 1::2], uv[3, :, 1])
    assert image.nv12_size(frame) == (H, W)


def test_split_gives_views_and_join_undoes_it():
    frame = image.bgr_to_nv12(random_bgr())
    y, uv = image.split_nv12(frame)
    assert np.shares_memory(y, frame) and np.shares_memory(uv, frame)
    np.testing.assert_array_equal(image.join_nv12(y, uv), frame)
    joined = image.join_nv12(y, uv)
    assert not np.shares_memory(joined, frame)


def test_s100_planes_are_accepted():
    bgr = random_bgr()
    y, uv = image.bgr_to_nv12(bgr, planes=True)
    y4, uv4 = y[None, :, :, None], uv[None]  # S100's valid shapes (1, H, W, 1), (1, H/2, W/2, 2)
    np.testing.assert_array_equal(image.join_nv12(y4, uv4), image.join_nv12(y, uv))
    np.testing.assert_array_equal(image.nv12_to_bgr((y4, uv4)), image.nv12_to_bgr((y, uv)))


def test_one_buffer_and_planes_decode_alike():
    frame = image.bgr_to_nv12(random_bgr(), range="video")
    np.testing.assert_array_equal(image.nv12_to_rgb(frame, range="video"),
                                  image.nv12_to_rgb(image.split_nv12(frame), range="video"))
    np.testing.assert_array_equal(image.nv12_to_bgr(frame), image.nv12_to_rgb(frame)[..., ::-1])


def test_bgr_and_rgb_are_channel_swaps_of_each_other():
    bgr = random_bgr(3)
    rgb = np.ascontiguousarray(bgr[..., ::-1])
    np.testing.assert_array_equal(image.bgr_to_nv12(bgr), image.rgb_to_nv12(rgb))
    np.testing.assert_array_equal(image.bgr_to_yuv444(bgr), image.rgb_to_yuv444(rgb))
    np.testing.assert_array_equal(image.bgr_to_y(bgr), image.rgb_to_y(rgb))
    yuv = image.bgr_to_yuv444(bgr)
    np.testing.assert_array_equal(image.yuv444_to_bgr(yuv), image.yuv444_to_rgb(yuv)[..., ::-1])
    assert image.yuv444_to_bgr(yuv).flags.c_contiguous


def test_y_is_the_nv12_y_plane():
    bgr = random_bgr(4)
    for range_ in formula.RANGES:
        y = image.bgr_to_y(bgr, range=range_)
        assert y.shape == (H, W)
        np.testing.assert_array_equal(y, image.bgr_to_nv12(bgr, range=range_)[:H])
        np.testing.assert_array_equal(y, image.bgr_to_yuv444(bgr, range=range_)[..., 0])


def test_chroma_is_the_rounded_mean_of_each_block():
    bgr = random_bgr(5)
    yuv = image.bgr_to_yuv444(bgr)  # rounded per pixel: the mean of these is near, not equal, to ours
    _, uv = image.bgr_to_nv12(bgr, planes=True)
    matrix, offset = formula.rgb_to_yuv_matrix("full")
    exact = bgr[..., ::-1].astype(np.float64) @ matrix[1:].T + offset[1:]
    block = exact.reshape(H // 2, 2, W // 2, 2, 2).mean(axis=(1, 3))
    np.testing.assert_array_equal(uv, np.floor(block + 0.5).astype(np.uint8))
    assert np.abs(yuv[..., 1:].reshape(H // 2, 2, W // 2, 2, 2).mean(axis=(1, 3)) - uv).max() <= 1


# ---- errors ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("h, w", [(47, 64), (48, 63), (1, 1)])
def test_odd_sizes_are_refused_naming_the_size(h, w):
    with pytest.raises(ValueError, match=rf"bgr of shape \({h}, {w}, 3\).*even.*{h}x{w}"):
        image.bgr_to_nv12(random_bgr(h=h, w=w))


def test_wrong_dtype_and_shapes_name_the_argument():
    with pytest.raises(TypeError, match=r"bgr: expected dtype uint8, got float32 \(shape \(48, 64, 3\)\)"):
        image.bgr_to_nv12(random_bgr().astype(np.float32))
    with pytest.raises(TypeError, match=r"rgb: expected a numpy.ndarray of uint8, got list"):
        image.rgb_to_y([[1, 2, 3]])
    with pytest.raises(ValueError, match=r"yuv: expected a YUV444 image of shape \(H, W, 3\), got shape \(48, 64\)"):
        image.yuv444_to_rgb(np.zeros((H, W), np.uint8))
    with pytest.raises(ValueError, match=r"nv12: expected an NV12 buffer of shape \(H \* 3 // 2, W\), got shape "
                                         r"\(50, 64\)"):
        image.nv12_to_bgr(np.zeros((50, W), np.uint8))
    with pytest.raises(ValueError, match=r"frame of shape \(3, 5\).*got 2x5"):
        image.split_nv12(np.zeros((3, 5), np.uint8))
    with pytest.raises(ValueError, match=r"uv: expected shape \(24, 32, 2\).*got shape \(24, 32\)"):
        image.join_nv12(np.zeros((H, W), np.uint8), np.zeros((H // 2, W // 2), np.uint8))
    with pytest.raises(TypeError, match=r"uv: expected dtype uint8, got int64"):
        image.nv12_to_rgb((np.zeros((H, W), np.uint8), np.zeros((H // 2, W // 2, 2), np.int64)))


# ---- round trips -------------------------------------------------------------------------------------


@pytest.mark.parametrize("range_, bound", [("full", 1), ("video", 2)])
def test_nv12_round_trip_on_flat_blocks(range_, bound):
    """On flat 2x2 blocks 4:2:0 loses nothing: what is left is rounding to 8 bits once each way (video
    range has fewer levels, 220 and 225, so one step there is ~1.16 RGB steps and rounds to 2 at worst)."""
    bgr = flat_blocks(random_bgr(6, 96, 128))
    back = image.nv12_to_bgr(image.bgr_to_nv12(bgr, range=range_), range=range_)
    assert differences(f"bgr -> nv12 -> bgr, {range_}, flat blocks", back, bgr) <= bound
    grey = np.full((4, 4, 3), 77, np.uint8)  # grey: U = V = 128 exactly, Y exact in full range
    assert np.array_equal(image.nv12_to_bgr(image.bgr_to_nv12(grey)), grey)


@pytest.mark.parametrize("range_, bound", [("full", 1), ("video", 2)])
def test_yuv444_round_trip(range_, bound):
    bgr = random_bgr(7, 96, 128)
    back = image.yuv444_to_bgr(image.bgr_to_yuv444(bgr, range=range_), range=range_)
    assert differences(f"bgr -> yuv444 -> bgr, {range_}", back, bgr) <= bound


def test_nv12_round_trip_on_a_smooth_image_stays_near():
    """Chroma subsampling blurs colour edges, so random pixels come back far off; a smooth image (a
    camera's) comes back close."""
    yy, xx = np.mgrid[0:H, 0:W]
    bgr = np.stack([xx * 4, yy * 5, (xx + yy) * 2], axis=-1).clip(0, 255).astype(np.uint8)
    back = image.nv12_to_bgr(image.bgr_to_nv12(bgr))
    assert differences("bgr -> nv12 -> bgr, gradient", back, bgr) <= 8


def test_planes_survive_a_round_trip_exactly():
    y, uv = image.bgr_to_nv12(random_bgr(8), planes=True)
    y2, uv2 = image.split_nv12(image.join_nv12(y, uv))
    np.testing.assert_array_equal(y2, y)
    np.testing.assert_array_equal(uv2, uv)


# ---- against OpenCV ----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def cv2():
    # A guard only: the test extra installs opencv-python-headless, so CI runs these.
    return pytest.importorskip("cv2")


def opencv_nv12(cv2, bgr):
    """OpenCV's BGR -> I420 (Y, all U, all V) rearranged as NV12 planes."""
    h, w = bgr.shape[:2]
    i420 = cv2.cvtColor(bgr, cv2.COLOR_BGR2YUV_I420).reshape(-1)
    y = i420[:h * w].reshape(h, w)
    u = i420[h * w:h * w * 5 // 4].reshape(h // 2, w // 2)
    v = i420[h * w * 5 // 4:].reshape(h // 2, w // 2)
    return y, np.stack([u, v], axis=-1)


def test_video_range_y_matches_opencv_i420(cv2):
    bgr = random_bgr(10, 480, 640)
    y_cv, _ = opencv_nv12(cv2, bgr)
    assert differences("Y, video range vs COLOR_BGR2YUV_I420", image.bgr_to_y(bgr, range="video"), y_cv) <= 1


def test_video_range_chroma_matches_opencv_i420_on_flat_blocks(cv2):
    bgr = flat_blocks(random_bgr(11, 480, 640))
    y_cv, uv_cv = opencv_nv12(cv2, bgr)
    y, uv = image.bgr_to_nv12(bgr, range="video", planes=True)
    assert differences("NV12 Y, video range vs I420", y, y_cv) <= 1
    assert differences("NV12 UV, video range vs I420 (flat blocks)", uv, uv_cv) <= 1


def test_opencv_i420_takes_the_top_left_pixel_not_the_mean(cv2):
    """Why the comparison above uses flat blocks: on random pixels OpenCV's chroma is one pixel's."""
    bgr = random_bgr(12)
    _, uv_cv = opencv_nv12(cv2, bgr)
    _, uv = image.bgr_to_nv12(bgr, range="video", planes=True)
    _, top_left = image.bgr_to_nv12(flat_blocks(bgr), range="video", planes=True)
    assert np.abs(uv.astype(int) - uv_cv).max() > 10
    assert np.abs(top_left.astype(int) - uv_cv).max() <= 1


def test_video_range_decoding_matches_opencv_nv12(cv2):
    rng = np.random.default_rng(13)
    y = rng.integers(0, 256, (480, 640), dtype=np.uint8)
    uv = rng.integers(0, 256, (240, 320, 2), dtype=np.uint8)
    frame = image.join_nv12(y, uv)
    ours = image.nv12_to_bgr((np.maximum(y, 16), uv), range="video")  # OpenCV clamps Y < 16 to 16
    assert differences("NV12 -> BGR, video range vs COLOR_YUV2BGR_NV12", ours,
                       cv2.cvtColor(frame, cv2.COLOR_YUV2BGR_NV12)) <= 1
    assert differences("NV12 -> RGB, video range vs COLOR_YUV2RGB_NV12", image.nv12_to_rgb(
        (np.maximum(y, 16), uv), range="video"), cv2.cvtColor(frame, cv2.COLOR_YUV2RGB_NV12)) <= 1
    in_range = image.join_nv12(y.clip(16, 235), uv.clip(16, 240))
    assert differences("NV12 -> BGR, video range, in-range samples", image.nv12_to_bgr(in_range, range="video"),
                       cv2.cvtColor(in_range, cv2.COLOR_YUV2BGR_NV12)) <= 1


def test_full_range_yuv444_matches_opencv_ycrcb(cv2):
    bgr = random_bgr(14, 480, 640)
    ycrcb = cv2.cvtColor(bgr, cv2.COLOR_BGR2YCrCb)
    assert differences("YUV444 full vs COLOR_BGR2YCrCb", image.bgr_to_yuv444(bgr),
                       np.ascontiguousarray(ycrcb[..., [0, 2, 1]])) <= 1
    yuv = random_bgr(15, 480, 640)
    reference = cv2.cvtColor(np.ascontiguousarray(yuv[..., [0, 2, 1]]), cv2.COLOR_YCrCb2BGR)
    assert differences("YUV444 -> BGR full vs COLOR_YCrCb2BGR", image.yuv444_to_bgr(yuv), reference) <= 1


def test_full_range_y_matches_opencv_grey(cv2):
    bgr = random_bgr(16, 480, 640)
    assert differences("Y full vs COLOR_BGR2GRAY", image.bgr_to_y(bgr),
                       cv2.cvtColor(bgr, cv2.COLOR_BGR2GRAY)) <= 1


def test_full_range_nv12_decoding_is_opencv_ycrcb_after_nearest_upsampling(cv2):
    frame = image.bgr_to_nv12(random_bgr(17, 480, 640))
    y, uv = image.split_nv12(frame)
    up = uv.repeat(2, axis=0).repeat(2, axis=1)
    ycrcb = np.ascontiguousarray(np.stack([y, up[..., 1], up[..., 0]], axis=-1))
    assert differences("NV12 -> BGR full vs upsampled COLOR_YCrCb2BGR", image.nv12_to_bgr(frame),
                       cv2.cvtColor(ycrcb, cv2.COLOR_YCrCb2BGR)) <= 1


def test_opencv_bgr2yuv_is_not_either_range(cv2):
    """COLOR_BGR2YUV is analog YUV (U = 0.492 (B - Y) + 128): neither Horizon range; not a reference."""
    bgr = random_bgr(18)
    yuv_cv = cv2.cvtColor(bgr, cv2.COLOR_BGR2YUV)
    for range_ in formula.RANGES:
        assert np.abs(image.bgr_to_yuv444(bgr, range=range_)[..., 1:].astype(int) - yuv_cv[..., 1:]).max() > 1
