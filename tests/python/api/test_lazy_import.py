"""accel's imports made on first use (onnx, onnxruntime, accel.compiler) survive an interruption: Ctrl-C while the
process's first compile imports them leaves nothing half-imported behind, and the next compile works."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

import accel
from accel.models import TINY_CNN, tiny_cnn_input

# A child process: the first import of the module named by argv[1] raises KeyboardInterrupt (as Ctrl-C there would),
# during the first use of the surface named by argv[2]; then every surface is used again.
CHILD = textwrap.dedent("""
    import importlib.abc, json, sys
    import numpy as np
    import accel
    from accel.models import TINY_CNN, tiny_cnn_input

    target, first = sys.argv[1], sys.argv[2]
    assert "onnx" not in sys.modules and "accel.compiler" not in sys.modules, "loaded by import accel"


    class InterruptOnce(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path, target_=None):
            if name == target:
                sys.meta_path.remove(self)
                raise KeyboardInterrupt
            return None


    def load(dev):
        return dev.load(TINY_CNN).run(tiny_cnn_input())[0]


    def eager(dev):
        return dev.ops.relu(np.array([-1.0, 2.0], np.float32))


    uses = {"load": load, "eager": eager}
    sys.meta_path.insert(0, InterruptOnce())
    out = {}
    with accel.open("emu") as dev:
        try:
            uses[first](dev)
            out["interrupted"] = False
        except KeyboardInterrupt:
            out["interrupted"] = True
        for name, use in uses.items():
            try:
                out[name] = np.asarray(use(dev)).tolist()
            except Exception as e:
                out[name] = f"{type(e).__name__}: {e}"
    print(json.dumps(out))
""")


@pytest.mark.parametrize("target, first", [("onnx.onnx_pb", "load"), ("onnx.helper", "eager"),
                                           ("accel.compiler.lower", "load"), ("onnx.onnx_ml_pb2", "load")])
def test_an_interrupted_first_import_leaves_the_next_compile_working(tmp_path, target, first):
    """Before: every later compile in the process failed with "module 'onnx' has no attribute
    'external_data_helper'" (a ModelFormatError blaming the valid model): the interrupted import of onnx had left
    its finished submodules in sys.modules without the package, so importing it again never bound them to it."""
    r = subprocess.run([sys.executable, "-c", CHILD, target, first], capture_output=True, text=True, timeout=120,
                       env={**os.environ, "ACCEL_CACHE_DIR": str(tmp_path / "cache")})
    assert r.returncode == 0, r.stderr[-3000:]
    out = json.loads(r.stdout.strip().splitlines()[-1])
    print(f"\n[{accel.frontend}] {target}: {out}")
    assert out["interrupted"] is True
    assert out["eager"] == [0.0, 2.0], out
    with accel.open("emu") as dev:
        expected = dev.load(TINY_CNN).run(tiny_cnn_input())[0].tolist()
    assert out["load"] == expected, out
