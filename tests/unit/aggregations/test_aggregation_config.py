"""Aggregations from config: the ``aggregation`` check kind, ``module:Class`` and entry points,
load-time errors naming the file and key, the metric and the judging of a collected aggregation.
No Spark."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from streamdq.aggregations import AggregationLoadError, AggregationRegistry, registry
from streamdq.analyzers import AggregationAnalyzer
from streamdq.analyzers.register import analyzer_from_spec
from streamdq.checks.spec import loads_suite
from streamdq.engine.config_check import check_run_config
from streamdq.errors import ConfigError
from streamdq.report import FAILURE, SUCCESS

USER = "tests.unit.aggregations.user_aggs"


def _one(entry: str, file: str = "checks.yaml") -> Any:
    text = f"checks:\n  - description: logs\n    constraints:\n      - aggregation: {entry}\n"
    return loads_suite(text, file=file).checks[0].constraints[0]


def test_a_check_file_entry_builds_the_analyzer_and_its_key_round_trips() -> None:
    c = _one('{function: numericHistogram, column: bytes, params: {bins: 4}, where: "status = 200"}')
    a = c.analyzer
    assert isinstance(a, AggregationAnalyzer)
    assert (a.function, a.column, a.parameters, a.where) == (
        "numericHistogram",
        "bytes",
        {"bins": 4},
        "status = 200",
    )
    assert analyzer_from_spec(json.loads(a.key())) == a
    assert a.metric_name == "numericHistogram" and a.combinable
    user = _one(f'{{function: "{USER}:WindowMax", column: bytes}}').analyzer
    assert user.metric_name == "windowMax" and not user.combinable


@pytest.mark.parametrize(
    ("function", "expected"),
    [
        ("nosuch.module:Agg", "cannot import module 'nosuch.module'"),
        (f"{USER}:Missing", "has no attribute 'Missing'"),
        (f"{USER}:not_a_class", "is a function, not a class"),
        ("json:JSONDecoder", "does not subclass streamdq.aggregations.Aggregation"),
        (f"{USER}:NoBuild", "does not implement empty, merge"),
        (f"{USER}:PlainClass", "is not a dataclass: define payload() and from_payload()"),
        ("histogramm", "is not registered (registered: average, discreteValuesHistogram"),
        ("mod:", "expected 'module:Class'"),
    ],
)
def test_a_bad_reference_is_a_load_time_error_naming_file_and_key(function: str, expected: str) -> None:
    with pytest.raises(ConfigError) as info:
        _one(f'{{function: "{function}", column: x}}', file="logs.yaml")
    (error,) = info.value.errors_list()
    assert error.file == "logs.yaml"
    assert error.key == "checks[0].constraints[0].aggregation.function"
    assert expected in error.problem


def test_params_a_class_rejects_name_the_params_key() -> None:
    with pytest.raises(ConfigError) as info:
        _one("{function: median, column: x, params: {k: 3}}", file="logs.yaml")
    (error,) = info.value.errors_list()
    assert error.key == "checks[0].constraints[0].aggregation.params"
    assert "params.k must be an integer in 8..65535, got 3" in error.problem


def test_the_run_config_check_reports_references_and_column_types_before_spark(tmp_path: Path) -> None:
    checks = tmp_path / "checks.yaml"
    checks.write_text(
        textwrap.dedent(
            f"""\
            checks:
              - description: access log
                constraints:
                  - aggregation: {{function: discreteValuesHistogram, column: status}}
                  - aggregation: {{function: average, column: referrer}}
                  - aggregation: {{function: "{USER}:Nope", column: status}}
            """
        )
    )
    (tmp_path / "in").mkdir()
    run = tmp_path / "run.yaml"
    run.write_text(
        textwrap.dedent(
            f"""\
            dataset: web
            source: {{type: files, format: json, path: {tmp_path / "in"}, schema: "status INT, referrer STRING"}}
            checkpoint: {tmp_path / "chk"}
            checks_file: {checks}
            """
        )
    )
    with pytest.raises(ConfigError) as info:
        check_run_config(run)
    errors = {e.key: e for e in info.value.errors_list()}
    bad = errors["checks[0].constraints[2].aggregation.function"]
    assert bad.file == str(checks) and "has no attribute 'Nope'" in bad.problem
    # the reference error stops that file's compilation; fix it and the type mismatch shows
    checks.write_text(
        checks.read_text().replace(f'  - aggregation: {{function: "{USER}:Nope", column: status}}\n', "")
    )
    with pytest.raises(ConfigError) as info:
        check_run_config(run)
    (error,) = info.value.errors_list()
    assert error.key == "checks[0].constraints[1].aggregation.column" and error.file == str(checks)
    assert "column 'referrer' is STRING, aggregation average needs a numeric type" in error.problem


def _dist(tmp_path: Path, entry: str) -> Path:
    """A real installed distribution (a .dist-info folder on sys.path) declaring ``entry``."""
    site = tmp_path / "site"
    info = site / "myaggs-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: myaggs\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(f"[streamdq.aggregations]\n{entry}\n")
    return site


def test_entry_points_of_the_group_are_found_and_loaded_when_resolved(
    tmp_path: Path, monkeypatch: Any
) -> None:
    site = _dist(tmp_path, f"longMax = {USER}:WindowMax\nbroken = nosuch.pkg:Agg")
    monkeypatch.syspath_prepend(str(site))
    reg = AggregationRegistry()
    assert reg.names() == []  # a fresh registry is empty: nothing registers on import
    assert {"longMax", "broken"} <= set(reg.load_entry_points())
    assert reg.resolve("longMax").metric_name() == "windowMax"
    with pytest.raises(AggregationLoadError, match="entry point 'broken' .*cannot load it"):
        reg.resolve("broken")


def test_importing_registers_nothing() -> None:
    code = (
        "import streamdq.aggregations, streamdq.analyzers, streamdq.checks.kinds;"
        "from streamdq.analyzers.state import state_types;"
        "print(sorted(t for t in state_types() if t.startswith('agg.')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
    assert registry().resolve("average").TYPE_TAG == "agg.Average"


def test_the_metric_is_named_after_the_aggregation_and_failures_stay_metrics() -> None:
    a = AggregationAnalyzer("average", "bytes")
    state = registry().resolve("average").from_arrow(pa.array([1.0, 3.0]), {})
    metric = a.metric(state)
    assert (metric.name, metric.instance, metric.value) == ("average", "bytes", 2.0)
    empty = a.metric(a.empty_state())
    assert empty.empty and empty.failure
    median = AggregationAnalyzer("median", "bytes").metric(
        registry().resolve("median").from_arrow(pa.array([5.0]), {})
    )
    assert median.approximate and median.error_bound is not None and median.value == 5.0
    gone = AggregationAnalyzer(f"{USER}:Gone", "bytes")
    assert "has no attribute 'Gone'" in (gone.metric(gone.empty_state()).failure or "")


def test_a_collected_aggregation_passes_unless_its_metric_failed_and_an_assertion_judges() -> None:
    c = _one("{function: average, column: bytes}")
    state = registry().resolve("average").from_arrow(pa.array([10.0]), {})
    assert c.judge(c.analyzer.metric(state)) == (SUCCESS, None)
    assert c.judge(c.analyzer.metric(c.analyzer.empty_state())) == (SUCCESS, None)
    status, message = c.judge(c.analyzer.failed("value() raised"))
    assert status == FAILURE and message == "value() raised"
    asserted = _one('{function: average, column: bytes, assertion: "< 5"}')
    status, message = asserted.judge(asserted.analyzer.metric(state))
    assert status == FAILURE and "expected < 5" in (message or "")
