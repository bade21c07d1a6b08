"""Writes the compiled model shipped with the C packages (conan's test_package runs it), and its check data.

  tiny_cnn.accm          python/accel/models/tiny_cnn.onnx compiled by accel.compiler
  tiny_cnn.input.bin     the input `image` [1, 3, 64, 64] float32, little-endian, from a fixed seed
  tiny_cnn.expected.bin  the output `probabilities` [1, 10] float32 for that input, by onnxruntime

Run it again (python models/make_shipped.py, with accel, numpy and onnxruntime installed) whenever the
compiler's output changes: tests/python/emulator/test_shipped_model.py fails until the files match.
"""
from pathlib import Path

HERE = Path(__file__).resolve().parent


def expected_probabilities(image) -> bytes:
    import onnxruntime as ort
    from accel.models import TINY_CNN

    session = ort.InferenceSession(str(TINY_CNN), providers=["CPUExecutionProvider"])
    (probabilities,) = session.run(None, {"image": image})
    return probabilities.astype("<f4").tobytes()


def files() -> dict[str, bytes]:
    """The shipped files' names and contents, made afresh (the first two as `python -m accel.models tiny_cnn`
    writes them)."""
    import tempfile

    from accel.models import tiny_cnn_input, write_tiny_cnn

    with tempfile.TemporaryDirectory() as tmp:
        out = {name: path.read_bytes() for name, path in write_tiny_cnn(tmp).items()}
    out["tiny_cnn.expected.bin"] = expected_probabilities(tiny_cnn_input())
    return out


if __name__ == "__main__":
    for name, data in files().items():
        (HERE / name).write_bytes(data)
        print(f"wrote {HERE / name} ({len(data)} bytes)")
