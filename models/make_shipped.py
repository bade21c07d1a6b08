"""Writes the compiled model shipped with the C packages (conan's test_package runs it), and its check data.

  tiny_cnn.accm          python/accel/models/tiny_cnn.onnx compiled by accel.compiler
  tiny_cnn.input.bin     the input `image` [1, 3, 64, 64] float32, little-endian, from a fixed seed
  tiny_cnn.expected.bin  the output `probabilities` [1, 10] float32 for that input, by onnxruntime

Run it again (python models/make_shipped.py, with accel, numpy and onnxruntime installed) whenever the
compiler's output changes: tests/python/test_shipped_model.py fails until the files match.
"""
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ONNX_MODEL = HERE.parent / "python" / "accel" / "models" / "tiny_cnn.onnx"
SEED = 2024


def accm_bytes() -> bytes:
    from accel import compiler

    return compiler.compile_model(str(ONNX_MODEL))


def input_image() -> np.ndarray:
    return np.random.default_rng(SEED).uniform(-1.0, 1.0, (1, 3, 64, 64)).astype("<f4")


def expected_probabilities(image: np.ndarray) -> np.ndarray:
    import onnxruntime as ort

    session = ort.InferenceSession(str(ONNX_MODEL), providers=["CPUExecutionProvider"])
    (probabilities,) = session.run(None, {"image": image})
    return probabilities.astype("<f4")


def files() -> dict[str, bytes]:
    """The shipped files' names and contents, made afresh."""
    image = input_image()
    return {
        "tiny_cnn.accm": accm_bytes(),
        "tiny_cnn.input.bin": image.tobytes(),
        "tiny_cnn.expected.bin": expected_probabilities(image).tobytes(),
    }


if __name__ == "__main__":
    for name, data in files().items():
        (HERE / name).write_bytes(data)
        print(f"wrote {HERE / name} ({len(data)} bytes)")
