"""devutils: small, exact developer utilities.

Modules: `devutils.text` (one-pass multi-replace), `devutils.dates` (month
arithmetic), `devutils.batch` (ML batch-size planning) and `devutils.system`
(resource sampling, GPUs, which dstat). The ``devutils`` command (also
``python -m devutils``) has one subcommand per module.
"""

__version__ = "0.1.0"
