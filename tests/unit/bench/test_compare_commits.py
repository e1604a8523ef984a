"""bench/engine/compare_commits.py exports an older ``streamdq/`` as ``streamdq_old``: every
reference to the package inside it must be renamed (but the mapped top-level packages, which
are not exported), or the old ``verify`` receives the new package's analyzers ("analyzers of
unknown kind", the failure this test guards). No Spark: the export is read, not run."""

from __future__ import annotations

import re

from tests.unit.bench.bench_modules import load_bench_module

compare = load_bench_module("engine/compare_commits.py", "bench_engine_compare_commits")


def test_the_old_package_refers_to_itself(tmp_path):
    compare.export_old("HEAD", tmp_path)
    package = tmp_path / "streamdq_old"
    sources = {p: p.read_text() for p in package.rglob("*.py")}
    assert package.joinpath("verification.py") in sources  # a top-level module, not a subpackage
    leftover = re.compile(r"\bstreamdq\.(?!(?:state|connectors)\b)|^\s*from streamdq import", re.M)
    stray = {
        str(p.relative_to(tmp_path)): m.group(0)
        for p, text in sources.items()
        if (m := leftover.search(text))
    }
    assert stray == {}
    assert "from streamdq_old.engine.plan import" in sources[package / "engine" / "analysis.py"]
