"""``python -m accel.shims VENDOR [options] -- COMMAND ...``: the launcher (launcher.py)."""
import sys

from .launcher import main

sys.exit(main())
