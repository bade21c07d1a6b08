"""The compiler's output is byte-identical to what it was when tests/python/data/compiled_digests.json was
recorded (tests/tools/compiled_digests.py): for every test model, the same .accm bytes or the same
CompileError. A restructuring of the compiler must leave this test passing; a change that is meant to
change the output records the file again and says why."""
from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "tests" / "tools"))
import compiled_digests  # noqa: E402  (a script of the source tree, not an installed module)


def test_compiler_output_is_the_recorded_bytes():
    recorded = compiled_digests.load()
    compared, changed, other_input = 0, [], []
    for name, key, outcome in compiled_digests.corpus():
        if name not in recorded:
            other_input.append(f"{name} (new)")
            continue
        want_key, want = recorded[name]
        if key != want_key:  # another onnx made this case differently: nothing to compare it with
            other_input.append(name)
            continue
        compared += 1
        if outcome != want:
            changed.append(f"{name}: {want[:80]} -> {outcome[:80]}")
    print(f"compiled {compared} models byte for byte against the record ({len(changed)} differ; "
          f"{len(other_input)} not comparable: {', '.join(other_input[:5])})")
    assert not changed, f"{len(changed)} of {compared} models compile differently:\n" + "\n".join(changed[:20])
    # Every real model and nearly every node-test case must be comparable, or the test shows nothing.
    assert compared >= 0.9 * len(recorded), f"only {compared} of {len(recorded)} recorded models comparable"
    for name in ("tiny_cnn", "resnet18", "mobilenetv2", "ppocr_det", "ppocr_cls", "ppocr_rec"):
        assert name not in other_input, f"{name}: its ONNX is not the recorded one"
