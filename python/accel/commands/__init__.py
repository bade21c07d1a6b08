"""The ``accel`` command's verbs other than ``selftest``: ``info``, ``compile``, ``run``, ``bench``,
``demo`` and ``cache``, one module each (registered in :data:`accel.cli.SUBCOMMANDS`), and what they share
(:mod:`.common`)."""
