"""The runtime: the core a front-end gives (``_frontend``), devices and their memory (``device``), loading a model
(``loading``), models and their runs (``model``, ``batching``), what a tensor is (``device_tensor``, accel.DeviceTensor
over the core's CoreTensor; ``dtypes``, ``tensor_info``, ``memory_ranges``, ``pending``, ``image_formats``), device
URIs (``device_uri``: libaccel's one parser) and what a device says of itself (``capabilities``), and how a message
shows a refused value (``messages``). Beside it, at their documented paths, the runtime's public modules:
``accel.futures``, ``accel.profiling`` and ``accel.compile_cache``; and the model front ends Device.load chooses
from (``accel.front_ends``).

The runtime imports nothing of ``accel.ops`` or of what sits above it, not even for typing
(tests/python/api/test_imports.py holds the layers). Import the public names from ``accel``.
"""
