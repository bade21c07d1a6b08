"""docs/ray.md's Python examples run, in order as one session, in a Python of their own (they start their own Ray,
which this session's cluster would clash with)."""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_ray_guide_examples_run(tmp_path):
    text = (ROOT / "docs" / "ray.md").read_text(encoding="utf-8")
    blocks = re.findall(r"^```python\n(.*?)^```", text, re.M | re.S)
    assert len(blocks) >= 2
    script = tmp_path / "ray_md.py"
    script.write_text("\n".join(blocks) + "\nprint('examples ran')\n")
    run = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300,
                         cwd=tmp_path, env={**os.environ, "RAY_ADDRESS": ""})
    assert run.returncode == 0, run.stderr[-3000:]
    assert "examples ran" in run.stdout
