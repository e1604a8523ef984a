"""The test tree runs in ONE pytest process: its folders have no ``__init__.py``, so pytest imports
each test module by its file name, and two modules of the same name stop the run at collection
("import file mismatch"). Every test module name is therefore unique across tests/."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]


def _same_names(root: Path) -> dict[str, list[str]]:
    seen: dict[str, list[str]] = defaultdict(list)
    for path in sorted(root.rglob("*.py")):
        if path.name.startswith("test_") and "__pycache__" not in path.parts:
            seen[path.name].append(str(path.relative_to(root)))
    return {name: paths for name, paths in seen.items() if len(paths) > 1}


def test_every_test_module_name_is_unique() -> None:
    assert _same_names(TESTS) == {}


def test_the_check_sees_two_modules_of_one_name(tmp_path: Path) -> None:
    for folder in ("unit", "unit/checks"):
        (tmp_path / folder).mkdir(parents=True, exist_ok=True)
        (tmp_path / folder / "test_x.py").write_text("")
    (tmp_path / "unit" / "helpers.py").write_text("")
    (tmp_path / "unit" / "checks" / "helpers.py").write_text("")  # not a test module: allowed
    assert _same_names(tmp_path) == {"test_x.py": ["unit/checks/test_x.py", "unit/test_x.py"]}
