"""What the compiler takes from the rest of accel, declared here and imported nowhere else in it.

The compiler ships inside the accel package (accel.compiler) but is a package of its own: it runs before there is
a device or a front-end (the C tests make their models with it straight from the source tree), so it depends on
the modules below and on nothing else of accel. Each is a leaf that imports nothing of accel itself:

- accel.image.formula: the colour formula (BT.601, two ranges) that frame inputs prepend to a model, the one
  accel.image converts pictures with, so that a converted frame and a compiled one agree;
- accel.runtime.image_formats: accel_image_format's codes (the runtime's one table of them, which TensorInfo.image
  reads too), which the .accm tensor record's image_format holds;
- accel._lazy_import: import_or_undo, for the lazy import of onnx's reference evaluator.

tests/python/emulator/test_compiler_package.py checks that no other compiler module imports outside the compiler
and that the compiler imports and compiles with only these present; tests/tools/stage_compiler.py stages exactly
these beside it for the C tests.
"""

from __future__ import annotations

from .._lazy_import import import_or_undo
from ..image import formula
from ..runtime.image_formats import IMAGE_FORMATS

__all__ = ["IMAGE_FORMATS", "formula", "import_or_undo"]
