"""Core benchmark: allocation path and one inference of the bundled CNN on the emulator, side by side
with malloc and with onnxruntime (same model, one thread), in one run.

    python benchmarks/core.py            # builds bench_core with CMake into build/bench first
    python benchmarks/core.py --build-dir DIR   # or into DIR: an existing build dir is only brought up to date
"""
import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build-dir", type=Path, default=ROOT / "build" / "bench",
                    help="the CMake build dir for bench_core (default build/bench)")
    build = ap.parse_args().build_dir.resolve()
    subprocess.run(["cmake", "-S", str(ROOT), "-B", str(build), "-G", "Ninja", "-DACCEL_BUILD_BENCHMARKS=ON"],
                   check=True, stdout=subprocess.DEVNULL)
    subprocess.run(["cmake", "--build", str(build), "--target", "bench_core", "accel_driver_emu"], check=True,
                   stdout=subprocess.DEVNULL)
    from accel import compiler
    import accel

    model = Path(accel.__file__).parent / "models" / "tiny_cnn.onnx"
    with tempfile.TemporaryDirectory() as tmp:
        accm = Path(tmp) / "tiny_cnn.accm"
        accm.write_bytes(compiler.compile_model(str(model)))
        subprocess.run([str(build / "bin" / "bench_core"), str(accm), "--uri", "emu:cores=1,threads=1,pool=8G"],
                       check=True)

    import onnxruntime as ort

    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    opts.inter_op_num_threads = 1
    sess = ort.InferenceSession(str(model), opts, providers=["CPUExecutionProvider"])
    x = np.zeros((1, 3, 64, 64), np.float32)
    for _ in range(20):
        sess.run(None, {"image": x})
    times = []
    for _ in range(300):
        t0 = time.perf_counter()
        sess.run(None, {"image": x})
        times.append(time.perf_counter() - t0)
    print(f"{'onnxruntime 1 thread, same model, median (ms)':44s} {np.median(times) * 1e3:12.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
