"""The image formats of accel.h (``accel_image_format``): what TensorInfo.image and DeviceCapabilities read from
the core's codes, what accel.image makes frames of, and what the model compiler writes in the .accm tensor
record (it imports nothing, so that the compiler can declare it as a dependency: emulator/compiler/_shared.py)."""
from __future__ import annotations

__all__ = ["FRAME_FORMATS", "IMAGE_FORMATS"]

#: accel_image_format's codes (accel.h) by the names TensorInfo.image.format and the .accm reader use.
IMAGE_FORMATS = {"none": 0, "nv12": 1, "nv12_y": 2, "nv12_uv": 3, "y": 4, "yuv444": 5, "rgb": 6, "bgr": 7}
#: TensorInfo.image formats: every accel_image_format but none.
FRAME_FORMATS = tuple(name for name in IMAGE_FORMATS if name != "none")
