"""accel_image_format (accel.h, ABI 1.2) by name: the one Python table of the pixel formats a graph input that is a
camera frame can have. TensorInfo.image names them from it, and the model compiler (accel.compiler) writes and
reads the .accm tensor record's image_format with it; it imports nothing, so that the compiler can declare it as a
dependency of its own (emulator/compiler/_shared.py)."""
from __future__ import annotations

__all__ = ["IMAGE_FORMATS"]

IMAGE_FORMATS = {"none": 0, "nv12": 1, "nv12_y": 2, "nv12_uv": 3, "y": 4, "yuv444": 5, "rgb": 6, "bgr": 7}
