"""devutils: small, exact developer utilities.

Modules: `devutils.text` (one-pass multi-replace), `devutils.dates` (month
arithmetic) and `devutils.batch` (ML batch-size planning). The ``devutils`` command (also
``python -m devutils``) has one subcommand per module.
"""

__version__ = "0.1.0"
