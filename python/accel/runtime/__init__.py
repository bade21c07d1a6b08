"""The runtime: the core a front-end gives (``_frontend``), devices and their memory (``device``), models and their
runs (``model``, ``batching``), what a tensor is (``dtypes``, ``tensor_info``, ``memory_ranges``). Beside it, at
their documented paths, the runtime's public modules: ``accel.futures``, ``accel.profiling``, ``accel.device_uri``,
``accel.capabilities`` and the model front ends (``accel.front_end``, ``accel.front_ends``, ``accel.compile_cache``).

The runtime imports nothing of ``accel.ops`` or of the tools above it (tests/python/api/test_imports.py holds the
layers). Import the public names from ``accel``, not from here.
"""
