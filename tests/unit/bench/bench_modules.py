"""Load a benchmark's module (bench/NAME/FILE.py) for its tests: bench/ is scripts, not a package."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

BENCH = Path(__file__).resolve().parents[3] / "bench"


def load_bench_module(relative: str, name: str) -> ModuleType:
    """``bench/<relative>`` imported as module ``name`` (registered in ``sys.modules``, where
    dataclasses look their module up).

    A bench script puts its own folder on ``sys.path`` and imports its siblings by their bare
    names (``import data``): bench/engine's ``data`` and bench/autovalidate's ``data`` are
    different modules. Those bare-named imports and the ``sys.path`` entries are taken back
    once the module is loaded (it keeps its own references), so that the next bench module a
    test loads imports its own siblings, whatever order the tests run in."""
    path = list(sys.path)
    before = set(sys.modules)
    spec = importlib.util.spec_from_file_location(name, BENCH / relative)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    finally:
        sys.path[:] = path
        for added in set(sys.modules) - before:
            file = getattr(sys.modules[added], "__file__", None) or ""
            if added != name and not added.startswith("bench_") and file.startswith(str(BENCH)):
                del sys.modules[added]
    return module
