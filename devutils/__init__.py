"""devutils: small, exact developer utilities.

Modules: `devutils.text`, `devutils.textstream` and `devutils.textfiles` (one-pass
multi-replace, in strings, streams and files; `devutils.textsearch` finds the matches
with the engines of `devutils.textengines`),
`devutils.dates` and `devutils.datecolumns` (month arithmetic, on scalars and
columns), `devutils.batch`, `devutils.batchfinder` and `devutils.divisors` (ML
batch-size planning, probing what fits, and the divisors the planner needs),
`devutils.system`, `devutils.rates` and `devutils.kernelcounters` (resource sampling,
the rates under it, and the kernel's counters they are computed from),
`devutils.gpu` (GPU snapshots) and `devutils.which_dstat` (which dstat is installed);
`devutils.limits` holds the integer bound they share, `devutils.signals` the signals
that stop a program. The ``devutils`` command (also ``python -m devutils``) has one
subcommand per topic.
"""

__version__ = "0.1.0"
