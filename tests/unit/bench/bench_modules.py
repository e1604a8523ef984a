"""Load a benchmark's module (bench/NAME/FILE.py) for its tests: bench/ is scripts, not a package."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

BENCH = Path(__file__).resolve().parents[3] / "bench"


def load_bench_module(relative: str, name: str) -> ModuleType:
    """``bench/<relative>`` imported as module ``name`` (registered in ``sys.modules``, where
    dataclasses look their module up)."""
    spec = importlib.util.spec_from_file_location(name, BENCH / relative)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module
