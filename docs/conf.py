"""Sphinx configuration of the documentation site (``sphinx-build -W docs build/site``).

The task pages are docs/*.md as they are (MyST Markdown); docs/api/ holds one page per
public module, each a single ``automodule`` directive, so the API reference is generated
from the docstrings and signatures and written nowhere else.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from docutils.nodes import Element
    from sphinx.addnodes import pending_xref
    from sphinx.application import Sphinx
    from sphinx.environment import BuildEnvironment

project = "devutils"
author = "the devutils authors"
copyright = "the devutils authors"

extensions = ["myst_parser", "sphinx.ext.autodoc", "sphinx.ext.napoleon"]
source_suffix = {".md": "markdown"}
root_doc = "index"

# Links like `dates.md#from-the-shell` resolve to the heading's GitHub-style slug, and a
# link to a heading or page that does not exist is a warning (so -W fails the build).
myst_heading_anchors = 6

# Every reference to a public devutils name (one in its module's __all__) must resolve;
# other names (numpy, pandas, the standard library: the build reads no remote inventory;
# a module's private helpers and type variables) are shown as code, unlinked.
nitpicky = True

# A module's page documents every name of its __all__; the names it re-exports from
# another devutils module are also listed under its docstring, linked to their home entry
# (autodoc documents a re-exported class or function again, but not a constant).
autodoc_default_options = {"members": True, "undoc-members": True, "show-inheritance": True}
autodoc_member_order = "bysource"
napoleon_google_docstring = True
napoleon_numpy_docstring = False
napoleon_use_ivar = True  # a dataclass's "Attributes:" once, not again beside its fields
default_role = "py:obj"  # `name` in a docstring links to its entry where it has one

# The copy button of every code block (_static/copy.js) copies code, not a transcript:
# a `>>>` example's statements, a console block's commands; tests/test_site.py clicks each.
html_static_path = ["_static"]
html_js_files = ["copy.js"]
html_css_files = ["copy.css"]

html_theme = "furo"
html_title = "devutils"
html_copy_source = False


def _public(target: str) -> bool:
    """Whether *target* is a name a devutils module exports (``devutils.dates.count_months``)."""
    match = re.fullmatch(r"devutils\.([a-z]\w*)\.([A-Za-z]\w*)(?:\.[A-Za-z]\w*)*", target)
    if match is None:
        return False
    try:
        module = importlib.import_module(f"devutils.{match[1]}")
    except ImportError:
        return True  # no such module: let the warning say so
    return match[2] in getattr(module, "__all__", ())


def _leave_unlinked(
    app: Sphinx, env: BuildEnvironment, node: pending_xref, contnode: Element
) -> Element | None:
    if node.get("refdomain") == "py" and not _public(node.get("reftarget", "")):
        return contnode
    return None  # a public name that did not resolve: nitpicky's warning stands


def _list_reexports(  # noqa: PLR0913, PLR0917 (the signature of Sphinx's event)
    app: Sphinx, what: str, name: str, obj: object, options: object, lines: list[str]
) -> None:
    """Under a module's docstring: the names of its __all__ imported from other modules."""
    if what != "module":
        return
    exported = getattr(obj, "__all__", ())
    for node in ast.parse(inspect.getsource(obj)).body:  # type: ignore[arg-type]
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("devutils."):
            links = [
                f"`{alias.asname or alias.name} <{node.module}.{alias.name}>`"
                for alias in node.names
                if (alias.asname or alias.name) in exported
            ]
            if links:
                lines += ["", f"Re-exported from `{node.module}`: {', '.join(links)}."]


def _drop_field_aliases(  # noqa: PLR0913, PLR0917 (the signature of Sphinx's event)
    app: Sphinx, what: str, name: str, obj: object, options: object, lines: list[str]
) -> None:
    """A named tuple's field shows its type alone, not "Alias for field number N"."""
    if len(lines) == 1 and re.fullmatch(r"Alias for field number \d+", lines[0]):
        lines.clear()


def setup(app: Sphinx) -> None:
    app.connect("missing-reference", _leave_unlinked)
    app.connect("autodoc-process-docstring", _list_reexports)
    app.connect("autodoc-process-docstring", _drop_field_aliases)
