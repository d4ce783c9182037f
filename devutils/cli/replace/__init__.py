"""``devutils replace``: the command line of `devutils.text` and `devutils.textfiles`.

One topic a module, each readable alone:

- `arguments`: the flags, ``prepare_argv`` (sed-style ``--pair`` and ``--in-place``),
  the replacer built from ``--pair`` and ``--map``;
- `maps`: reading a ``--map`` file (JSON or TSV);
- `tasks`: the run's `Job` (mode and settings) and the files it covers (``--recursive``);
- `work`: one file in the run's mode (stdout, ``--in-place``, ``--dry-run``,
  ``--diff``), and how names are shown;
- `pool`: running the files here or in worker processes (``--jobs``), signals, the spool;
- `progress`: the progress bar;
- `command` (this package's ``run``): the run from start to exit status.
"""

from __future__ import annotations

from devutils.cli.replace.arguments import prepare_argv
from devutils.cli.replace.command import register

__all__ = ["prepare_argv", "register"]
