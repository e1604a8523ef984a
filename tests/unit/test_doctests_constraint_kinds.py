"""Every built-in constraint kind carries a runnable example (``ConstraintKind.example``), and
the examples run (issue 21 item 5).

The kinds are found through the registry (``register_builtins`` then ``constraint_kinds``), so
a new built-in kind without an example fails here without being listed. Each example is run
with the doctest module in the namespace ``ConstraintKind.example`` documents. Constraints judge
metrics in pure Python, so the examples build their metric by hand and need no Spark; that is
checked in a fresh interpreter, where no other test can have started one.
"""

from __future__ import annotations

import doctest
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from streamdq.checks.register import register_builtins
from streamdq.checks.spec import constraint_from_dict
from streamdq.checks.vocabulary import constraint_kinds
from streamdq.metric import Distribution, Quantiles

FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE

register_builtins()
BUILTINS = sorted(
    name
    for name, kind in constraint_kinds().items()
    if getattr(kind.analyzer, "__module__", "").startswith("streamdq.checks.")
)
"""The built-in kinds: those whose analyzer builder streamdq.checks defines (a kind a test
registers for a while is left out)."""


def _globs() -> dict[str, Any]:
    return {
        "constraint_from_dict": constraint_from_dict,
        "Distribution": Distribution,
        "Quantiles": Quantiles,
    }


def _run(name: str, example: str) -> doctest.TestResults:
    test = doctest.DocTestParser().get_doctest(example, _globs(), f"{name}.example", None, 0)
    runner = doctest.DocTestRunner(optionflags=FLAGS)
    runner.run(test)
    return runner.summarize(verbose=False)


def test_the_registry_holds_the_built_in_vocabulary() -> None:
    assert {"is_complete", "has_mean", "has_range", "has_no_anomalies", "expression", "aggregation"} <= set(
        BUILTINS
    )
    assert len(BUILTINS) >= 50


@pytest.mark.parametrize("name", BUILTINS)
def test_every_built_in_kind_has_an_example_that_runs(name: str) -> None:
    kind = constraint_kinds()[name]
    assert ">>>" in kind.example, f"constraint kind {name!r} has no example (ConstraintKind.example)"
    test = doctest.DocTestParser().get_doctest(kind.example, _globs(), name, None, 0)
    assert len(test.examples) >= 2, f"{name}: the example should build a constraint and show it at work"
    assert f'constraint_from_dict({{"{name}": ' in kind.example, (
        f"{name}: the example builds no {name} constraint"
    )
    result = _run(name, kind.example)
    assert result.failed == 0, f"{result.failed} of {result.attempted} example lines of {name} failed"


def test_a_wrong_example_is_counted_as_a_failure() -> None:
    """The runner really runs the examples: a wrong expected output fails."""
    assert _run("wrong_example", ">>> 1 + 1\n3\n").failed == 1
    assert _run("right_example", ">>> 1 + 1\n2\n") == doctest.TestResults(failed=0, attempted=1)


def test_the_examples_start_no_spark() -> None:
    """Every example runs in a fresh interpreter without a SparkContext or a JVM."""
    script = textwrap.dedent(
        f"""
        import sys
        sys.path.insert(0, {str(Path(__file__).parent)!r})
        import test_doctests_constraint_kinds as t
        failed = [n for n in t.BUILTINS if t._run(n, t.constraint_kinds()[n].example).failed]
        from pyspark import SparkContext
        assert SparkContext._active_spark_context is None, "a SparkContext was started"
        assert SparkContext._gateway is None, "a JVM gateway was started"
        print("failed:", failed)
        """
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0 and done.stdout.strip().endswith("failed: []"), (
        done.stderr[-2000:] + done.stdout[-2000:]
    )
