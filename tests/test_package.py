"""Tests for the package as a whole: every module imports alone, the layers hold, CI."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "devutils"
MODULES = sorted(
    ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
    for path in PACKAGE.rglob("*.py")
)
LIBRARY = [name for name in MODULES if not name.startswith(("devutils.cli", "devutils.__main__"))]


@pytest.mark.parametrize("module", MODULES)
def test_every_module_imports_alone_in_a_fresh_interpreter(module: str) -> None:
    completed = subprocess.run(
        [sys.executable, "-c", f"import {module}"], capture_output=True, text=True, check=False
    )
    assert completed.returncode == 0, completed.stderr


@pytest.mark.parametrize("module", LIBRARY)
def test_the_library_never_imports_the_command_line(module: str) -> None:
    code = f"import sys, {module}; print(sorted(m for m in sys.modules if m.startswith('devutils.cli')))"
    completed = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert completed.stdout.strip() == "[]"


def test_no_generated_code() -> None:
    calls = []
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) in {"exec", "eval"}:
                calls.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert calls == []


def test_no_test_module_imports_another() -> None:
    imports = []
    for path in (ROOT / "tests").glob("test_*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("tests.test_"):
                imports.append(f"{path.name}: {node.module}")
    assert imports == []


@pytest.mark.skipif(
    not (ROOT / ".ci" / "run").exists(), reason="needs .ci/run (a clone or the sdist)"
)
def test_ci_runs_the_readmes_test_command() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    prefix = "$ python3 -m venv .venv && . .venv/bin/activate && "
    (test_command,) = [
        line for line in readme.splitlines() if line.startswith(prefix) and "pytest" in line
    ]
    assert test_command.removeprefix(prefix) in ci.splitlines()
    assert "lint-imports" in test_command


def test_the_distribution_is_published_under_its_own_name() -> None:
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert project["name"] == "devutils-exact"  # "devutils" on the index is another project
    hints = []
    for path in [*PACKAGE.rglob("*.py"), *(ROOT / "docs").glob("*.md"), ROOT / "README.md"]:
        text = path.read_text(encoding="utf-8")
        hints += [f"{path.name}: {hint}" for hint in ("'devutils[", '"devutils[') if hint in text]
        # a clone's hint ('.[gpu]') is useless on a package index page: name the distribution
        hints += [
            f"{path.name}: '.[gpu]' without devutils-exact[gpu]"
            for paragraph in text.split("\n\n")
            if "'.[gpu]'" in paragraph and "devutils-exact[gpu]" not in paragraph
        ]
    assert hints == []  # every install hint names devutils-exact


def test_the_license_and_what_the_sdist_needs_are_shipped() -> None:
    import tomllib

    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    license_text = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert license_text.startswith("MIT License\n\nCopyright (c) ")
    assert config["project"]["license"] == "MIT"
    assert config["project"]["license-files"] == ["LICENSE"]
    shipped = config["tool"]["hatch"]["build"]["targets"]["sdist"]["include"]
    assert {"devutils", "tests", "docs", "bench", ".ci", "LICENSE", "conftest.py"} <= set(shipped)


def test_the_readme_has_no_link_that_breaks_on_a_package_index_page() -> None:
    # The index shows README.md alone: a relative link there leads nowhere, so files are
    # named as paths, and every link is absolute.
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    targets = re.findall(r"\]\(([^)]*)\)|<([a-z]+://[^>]*)>", readme)
    links = [target for pair in targets for target in pair if target]
    assert all(re.match(r"https?://", link) for link in links), links
