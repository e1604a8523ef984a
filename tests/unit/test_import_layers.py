"""The import layers of DESIGN.md section 2 hold (.importlinter, run by .ci/lint_imports.py).

No Spark: import-linter reads the source files. connectors/ and state/ are staged under
streamdq/ as they install, so their imports are in the graph too.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _runner() -> ModuleType:
    spec = importlib.util.spec_from_file_location("lint_imports", ROOT / ".ci" / "lint_imports.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def runner() -> ModuleType:
    if not (Path(sys.executable).parent / "lint-imports").exists():
        pytest.fail("lint-imports is missing: install the dev extra (pip install -e '.[dev]')")
    return _runner()


def test_every_contract_is_kept(runner: ModuleType, tmp_path: Path) -> None:
    result = runner.lint(runner.stage(ROOT, tmp_path))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout
    # connectors and state are in the graph (staged), not silently left out
    assert "streamdq.connectors" in (ROOT / ".importlinter").read_text()


def _stage_with(runner: ModuleType, tmp_path: Path, package: str, name: str, source: str) -> Path:
    """The staged tree with one extra module in ``streamdq/<package>/`` (the checkout is untouched)."""
    staged = runner.stage(ROOT, tmp_path)
    link = staged / "streamdq" / package
    link.unlink()
    link.mkdir()
    for entry in (ROOT / "streamdq" / package).iterdir():
        (link / entry.name).symlink_to(entry)
    (link / name).write_text(source)
    return staged


def test_an_analyzer_importing_the_engine_breaks_the_layers(runner: ModuleType, tmp_path: Path) -> None:
    # a function-local import counts as much as a top-level one
    staged = _stage_with(
        runner, tmp_path, "analyzers", "layer_probe.py", "def f():\n    from streamdq.engine import plan\n"
    )
    result = runner.lint(staged)
    assert result.returncode == 1, result.stdout
    assert "streamdq.analyzers is not allowed to import streamdq.engine" in result.stdout
    assert "streamdq.analyzers.layer_probe -> streamdq.engine.plan" in result.stdout


def test_a_check_importing_the_state_store_breaks_the_wiring_rule(runner: ModuleType, tmp_path: Path) -> None:
    staged = _stage_with(runner, tmp_path, "checks", "wiring_probe.py", "import streamdq.state.delta_store\n")
    result = runner.lint(staged)
    assert result.returncode == 1, result.stdout
    assert "streamdq.checks is not allowed to import streamdq.state" in result.stdout


def test_an_ignore_line_that_matches_no_import_fails_so_fixed_violations_leave_the_list(
    runner: ModuleType, tmp_path: Path
) -> None:
    # a contract of its own with one ignore line that no import matches
    stale = (ROOT / ".importlinter").read_text() + (
        "\n[importlinter:contract:stale]\n"
        "name = stale ignore\n"
        "type = forbidden\n"
        "source_modules =\n    streamdq.analyzers\n"
        "forbidden_modules =\n    streamdq.engine\n"
        "ignore_imports =\n    streamdq.analyzers.base -> streamdq.engine.plan\n"
    )
    path = tmp_path / "stale.ini"
    path.write_text(stale)
    staged = tmp_path / "stage"
    staged.mkdir()
    result = runner.lint(runner.stage(ROOT, staged), config=path)
    assert result.returncode == 1, result.stdout
    assert "No matches for ignored import" in result.stdout + result.stderr
