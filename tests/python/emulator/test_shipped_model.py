"""The compiled model shipped for the C packages (models/) is what the compiler makes today, and its
expected output is onnxruntime's for the shipped input (models/make_shipped.py writes all three)."""
import importlib.util
from pathlib import Path

import numpy as np

MODELS = Path(__file__).resolve().parents[3] / "models"


def load_maker():
    spec = importlib.util.spec_from_file_location("make_shipped", MODELS / "make_shipped.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_shipped_files_match_the_compiler_and_onnxruntime():
    fresh = load_maker().files()
    assert (MODELS / "tiny_cnn.accm").read_bytes() == fresh["tiny_cnn.accm"], \
        "models/tiny_cnn.accm is stale: run python models/make_shipped.py"
    assert (MODELS / "tiny_cnn.input.bin").read_bytes() == fresh["tiny_cnn.input.bin"]
    shipped = np.frombuffer((MODELS / "tiny_cnn.expected.bin").read_bytes(), "<f4")
    reference = np.frombuffer(fresh["tiny_cnn.expected.bin"], "<f4")
    np.testing.assert_allclose(shipped, reference, rtol=1e-5, atol=1e-7)
