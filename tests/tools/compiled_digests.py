"""What the compiler makes of every test model, as digests: the record that a change to the compiler's code
(not to what it computes) leaves its output byte-identical.

    python tests/tools/compiled_digests.py [-o tests/python/data/compiled_digests.json]

writes, for each model of the corpus below, the SHA-256 of the ONNX it was given and of the .accm it
compiled (or the CompileError it raised). tests/python/emulator/test_compiled_bytes.py compiles the corpus again
and compares every model whose ONNX is the same; record the file again, with the compiler before your
change, only when the output is meant to change.

The corpus: the shipped tiny CNN, the real models (ResNet-18 and MobileNetV2 built with seeded weights, the
PP-OCR detector, classifier and recognizer fetched once), and every onnx backend node-test case of a
supported op (tests/conformance).
"""
from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path
from typing import Iterator, Tuple

ROOT = Path(__file__).resolve().parents[2]
DEFAULT_OUT = ROOT / "tests" / "python" / "data" / "compiled_digests.json"
sys.path.insert(0, str(ROOT / "tests"))


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _outcome(compile_fn) -> str:
    from accel import compiler

    try:
        return _sha(compile_fn())
    except compiler.CompileError as e:
        return f"CompileError: {e}"


def corpus() -> Iterator[Tuple[str, str, str]]:
    """(name, sha256 of the ONNX input and its input shapes, outcome) for every model of the corpus."""
    import onnx

    import accel
    from accel import compiler
    from conformance import cases, runner
    from models import catalog

    tiny = Path(accel.__file__).parent / "models" / "tiny_cnn.onnx"
    yield "tiny_cnn", _sha(tiny.read_bytes()), _outcome(lambda: compiler.compile_model(str(tiny)))
    for name, spec in catalog.MODELS.items():
        data = catalog.model_path(name).read_bytes()
        shapes = {spec.input_name: spec.test_shape}
        yield (name, _sha(data + repr(shapes).encode()),
               _outcome(lambda data=data, shapes=shapes: compiler.compile_model(onnx.load_from_string(data), shapes)))
    for case in cases.collect(compiler.SUPPORTED_OPS):
        key = _sha(case.model.SerializeToString() + repr([getattr(v, "shape", None) for v in case.inputs]).encode())
        accm, error, _, _ = runner.compile_case(case)
        yield case.name, key, _sha(accm) if accm is not None else f"CompileError: {error}"


def load(path: Path = DEFAULT_OUT) -> dict:
    """{name: (onnx sha256, outcome)} of a recorded file."""
    return {name: tuple(v) for name, v in json.loads(Path(path).read_text(encoding="utf-8"))["models"].items()}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-o", "--output", default=str(DEFAULT_OUT))
    args = ap.parse_args(argv)
    import onnx

    rows = sorted((name, key, outcome) for name, key, outcome in corpus())
    lines = [f"  {json.dumps(name)}: [{json.dumps(key)}, {json.dumps(outcome)}]" for name, key, outcome in rows]
    out = Path(args.output)
    out.parent.mkdir(parents=True, exist_ok=True)
    # One model a line: a diff of the file reads as the list of models whose output changed.
    out.write_text(f'{{"onnx_version": {json.dumps(onnx.__version__)}, "models": {{\n' + ",\n".join(lines) + "\n}}\n",
                   encoding="utf-8")
    print(f"{out}: {len(rows)} models")
    return 0


if __name__ == "__main__":
    sys.exit(main())
