"""The error contract (streamdq/errors.py): one ConfigError(key, problem, fix, file) form, a
StreamdqError base for every error raised on purpose, and real config mistakes naming their key."""

from __future__ import annotations

import ast
import importlib
import inspect
import pickle
import pkgutil
from pathlib import Path

import pytest

from streamdq.errors import ConfigError, ConfigErrors, ErrorCollector, StreamdqError

ROOT = Path(__file__).resolve().parents[2]
PACKAGE_DIRS = ("streamdq", "connectors", "state")


def _free_form_sites() -> list[str]:
    """``file:line`` of every ConfigError(...) call in the package that is not the structured form
    (a lone positional message, or a ``path=`` keyword)."""
    sites = []
    for folder in PACKAGE_DIRS:
        for path in sorted((ROOT / folder).rglob("*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            for node in ast.walk(tree):
                if not isinstance(node, ast.Call):
                    continue
                func = node.func
                name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)
                if name != "ConfigError":
                    continue
                keywords = {k.arg for k in node.keywords}
                given = len(node.args) + len(keywords & {"key", "problem"})
                if given < 2 or "path" in keywords:
                    sites.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    return sites


def test_no_call_site_uses_the_free_form():
    offending = _free_form_sites()
    assert offending == [], "use ConfigError(key, problem, fix=None, file=None): " + ", ".join(offending)


BUILTIN_RAISES = ("ValueError", "TypeError", "KeyError")

# Files whose bare raises are left to the engineers who own them (issue 21 leftovers): each
# entry is (path, qualified function) -> why it stays. Convert them to InvalidArgument /
# InvalidType / UnknownName (streamdq.errors) when the file is free, and drop the entry.
LEFT_BARE = {
    ("streamdq/errors.py", "ConfigErrors.__init__"): "ConfigErrors([]) is a programming error",
}


def _bare_raises() -> list[tuple[str, str, int]]:
    """``(path, qualified function, line)`` of every ``raise ValueError(...)`` / ``TypeError`` /
    ``KeyError`` in a public function or method of the package. Private helpers (a ``_name`` in
    the qualified name, dunders aside) and local functions may raise builtins: they are the
    package's own programming errors, or caught where they are called."""
    found = []
    for folder in PACKAGE_DIRS:
        for path in sorted((ROOT / folder).rglob("*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"))

            def visit(node: ast.AST, stack: list[ast.AST], path: Path = path) -> None:
                for child in ast.iter_child_nodes(node):
                    if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                        visit(child, [*stack, child])
                        continue
                    if isinstance(child, ast.Raise) and isinstance(child.exc, ast.Call):
                        func = child.exc.func
                        name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)
                        names = [getattr(s, "name", "") for s in stack]
                        functions = [s for s in stack if not isinstance(s, ast.ClassDef)]
                        private = len(functions) > 1 or any(
                            n.startswith("_") and not (n.startswith("__") and n.endswith("__")) for n in names
                        )
                        if name in BUILTIN_RAISES and not private:
                            found.append((str(path.relative_to(ROOT)), ".".join(names), child.lineno))
                    visit(child, stack)

            visit(tree, [])
    return found


def test_public_functions_raise_streamdq_errors_not_bare_builtins():
    """A public function or method raises a StreamdqError subclass on purpose (InvalidArgument,
    InvalidType, UnknownName, ConfigError, ...: the builtin is their second base), never a bare
    ValueError / TypeError / KeyError; LEFT_BARE lists what is left, and only while it is there."""
    found = _bare_raises()
    offending = [f"{p}:{line} ({where})" for p, where, line in found if (p, where) not in LEFT_BARE]
    assert offending == [], "raise a streamdq.errors class instead: " + ", ".join(offending)
    stale = sorted(set(LEFT_BARE) - {(p, where) for p, where, _ in found})
    assert stale == [], f"these raise no bare builtin any more: drop them from LEFT_BARE: {stale}"


def test_public_apis_raise_the_builtin_compatible_streamdq_errors():
    """A sample of the converted public raises (no Spark): each is a StreamdqError and still the
    builtin older callers catch; the quality score's settings are a keyed ConfigError."""
    from datetime import datetime

    import pandas as pd
    from streamdq.state.queries import history_filter, resolve_analyzer
    from streamdq.state.sql import lit

    from streamdq.autovalidate.avh.corruptions import Corruption
    from streamdq.autovalidate.quality.score import QualityScoreConfig
    from streamdq.checks.spec import dump_checks
    from streamdq.detectors import BatchNormal
    from streamdq.errors import InvalidArgument, InvalidType
    from streamdq.frames import to_spark

    cases = [
        (lambda: dump_checks([], fmt="xml"), InvalidArgument, ValueError, "expected 'yaml' or 'json'"),
        (lambda: BatchNormal().detect([]), InvalidArgument, ValueError, "data series is empty"),
        (lambda: Corruption("no_such", 0.5), InvalidArgument, ValueError, "unknown issue type"),
        (lambda: history_filter("d", "Size", scope="week"), InvalidArgument, ValueError, "unknown scope"),
        (
            lambda: history_filter("d", "Size", start=datetime(2026, 1, 1)),
            InvalidArgument,
            ValueError,
            "aware",
        ),
        (lambda: resolve_analyzer(3), InvalidType, TypeError, "expected an Analyzer"),
        (lambda: lit(object()), InvalidType, TypeError, "no SQL literal"),
        (lambda: to_spark(pd.DataFrame()), InvalidArgument, ValueError, "no columns"),
    ]
    for call, cls, builtin, message in cases:
        with pytest.raises(cls, match=message) as info:
            call()
        assert isinstance(info.value, StreamdqError) and isinstance(info.value, builtin)
    with pytest.raises(ConfigError) as config:
        QualityScoreConfig(history=0)
    assert config.value.key == "quality_score.history" and config.value.fix
    # the constraint vocabulary: an unknown kind names the known ones, a taken name is refused
    from streamdq.checks.constraint import ConstraintKind, constraint_kind, register_constraint_kind
    from streamdq.checks.vocabulary import ConstraintKindTaken
    from streamdq.errors import UnknownName

    with pytest.raises(UnknownName) as unknown:
        constraint_kind("has_sise")
    assert unknown.value.problem == "unknown constraint 'has_sise'; did you mean 'has_size'?"
    assert "is_complete" in unknown.value.known and isinstance(unknown.value, KeyError)
    with pytest.raises(ConstraintKindTaken, match="already registered") as taken:
        register_constraint_kind(ConstraintKind("has_size", (), lambda p, w: None))
    assert isinstance(taken.value, StreamdqError) and isinstance(taken.value, ValueError)


def test_the_bare_raise_scan_sees_public_raises_only(tmp_path, monkeypatch):
    pkg = tmp_path / "streamdq"
    pkg.mkdir()
    (pkg / "x.py").write_text(
        "def f(x):\n    raise ValueError('public')\n"
        "class C:\n    def __post_init__(self):\n        raise TypeError('a dunder of a public class')\n"
        "    def _check(self):\n        raise KeyError('private')\n"
        "def g():\n    def local():\n        raise KeyError('local')\n    raise InvalidArgument('fine')\n"
        "def h():\n    raise\n"
    )
    monkeypatch.setattr(f"{__name__}.ROOT", tmp_path)
    monkeypatch.setattr(f"{__name__}.PACKAGE_DIRS", ("streamdq",))
    assert _bare_raises() == [("streamdq/x.py", "f", 2), ("streamdq/x.py", "C.__post_init__", 5)]


def test_the_scan_sees_a_free_form_call(tmp_path, monkeypatch):
    """The scan above is not vacuous: it flags ConfigError(message) and path=."""
    pkg = tmp_path / "streamdq"
    pkg.mkdir()
    (pkg / "x.py").write_text(
        "ConfigError('oops')\nerrors.ConfigError('bad', path='a.b')\n"
        "ConfigError('a.b', 'bad')\nConfigError(key='a', problem='b')\n"
    )
    monkeypatch.setattr(f"{__name__}.ROOT", tmp_path)
    monkeypatch.setattr(f"{__name__}.PACKAGE_DIRS", ("streamdq",))
    assert _free_form_sites() == ["streamdq/x.py:1", "streamdq/x.py:2"]


def test_the_structured_form_renders_file_key_problem_fix():
    err = ConfigError("source.schema", "missing or empty schema", "write schema: 'id INT'", "orders.yaml")
    assert (err.key, err.problem, err.fix, err.file) == (
        "source.schema",
        "missing or empty schema",
        "write schema: 'id INT'",
        "orders.yaml",
    )
    assert str(err) == "orders.yaml: source.schema: missing or empty schema (fix: write schema: 'id INT')"
    assert err.line() == "orders.yaml: source.schema: missing or empty schema; fix: write schema: 'id INT'"
    kw = ConfigError(key="window", problem="expected a duration", fix="write window: 1 minute")
    assert str(kw) == "window: expected a duration (fix: write window: 1 minute)"
    assert str(ConfigError("", "not valid YAML", file="a.yaml")) == "a.yaml: not valid YAML"
    assert str(err.with_file("other.yaml")) == str(err)  # a named file is kept
    assert ConfigError("k", "p").with_file("f.yaml").line() == "f.yaml: k: p"


def test_the_free_form_is_refused():
    """A lone message has no key, and path= is no keyword: both are TypeErrors."""
    with pytest.raises(TypeError, match="problem"):
        ConfigError("just a message")  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="path"):
        ConfigError("just a message", path="a.b")  # type: ignore[call-arg]


def test_errors_are_streamdq_errors_and_value_errors():
    err = ConfigError("dataset", "missing required key")
    many = ConfigErrors([err, ConfigError("window", "bad")])
    for e in (err, many):
        assert isinstance(e, StreamdqError) and isinstance(e, ValueError)
    with pytest.raises(ValueError, match="at least one"):
        ConfigErrors([])


def test_errors_pickle_with_their_fields():
    err = ConfigError("sinks[0].port", "not a port", "use 1..65535", "run.yaml")
    back = pickle.loads(pickle.dumps(err))
    assert (back.key, back.problem, back.fix, back.file, str(back)) == (
        err.key,
        err.problem,
        err.fix,
        err.file,
        str(err),
    )
    many = pickle.loads(pickle.dumps(ConfigErrors([err, ConfigError("window", "bad")])))
    assert [e.key for e in many.errors] == ["sinks[0].port", "window"]


def test_the_builtin_compatible_errors_are_streamdq_errors_that_pickle():
    """InvalidArgument / InvalidType / UnknownName: StreamdqErrors with the builtin a caller may
    still catch; UnknownName keeps its fields through pickle and prints its message unquoted."""
    import doctest

    import streamdq.errors
    from streamdq.errors import InvalidArgument, InvalidType, UnknownName

    for cls, builtin in ((InvalidArgument, ValueError), (InvalidType, TypeError), (UnknownName, KeyError)):
        assert issubclass(cls, StreamdqError) and issubclass(cls, builtin)
    err = UnknownName("constraint", "has_sise", ["has_size", "is_complete"])
    assert (
        str(err) == "unknown constraint 'has_sise'; did you mean 'has_size'? (known: has_size, is_complete)"
    )
    back = pickle.loads(pickle.dumps(err))
    assert (type(back), back.what, back.name, back.known, str(back)) == (
        UnknownName,
        "constraint",
        "has_sise",
        ("has_size", "is_complete"),
        str(err),
    )
    assert str(UnknownName("analyzer", "x")) == "unknown analyzer 'x'"  # nothing known: no list
    assert doctest.testmod(streamdq.errors).failed == 0


def test_the_collector_names_the_file_and_raises_all():
    errs = ErrorCollector("run.yaml")
    with errs.catch():
        raise ConfigError("window", "bad")
    errs.add(ConfigErrors([ConfigError("a", "p"), ConfigError("b", "q", file="other.yaml")]))
    with pytest.raises(ConfigErrors) as info:
        errs.raise_if_any()
    assert [(e.key, e.file) for e in info.value.errors] == [
        ("window", "run.yaml"),
        ("a", "run.yaml"),
        ("b", "other.yaml"),
    ]


def test_a_value_error_that_is_no_config_error_is_not_collected():
    errs = ErrorCollector()
    with pytest.raises(ValueError, match="invalid literal"):
        errs.get(int, "x", default=0)
    assert not errs


RUN_CONFIG = """\
dataset: orders
source: {type: generator, rows_per_second: 200}
window: -1 minutes
checkpoint: ./chk
state: {path: ./state, retention_hours: 0}
supervision: {poison: explode}
colour: blue
"""

CHECKS = """\
dataset: orders
checks:
- description: ids
  constraints:
  - is_complete: {column: id}
- description: amounts
  constraints:
  - has_mean: {column: amount, assertion: ">= 0"}
  - is_unique: {colum: id}
  - has_size: {assertion: {between: [10, 1]}}
- description: levels
  level: fatal
  constraints: [is_complete: id]
"""


def _mistakes_in(path: Path, text: str, load) -> tuple[ConfigError, ...]:
    """Write ``text`` to ``path``, load it with ``load(path)`` and return the ConfigErrors raised,
    each checked to be a StreamdqError naming the file."""
    path.write_text(text)
    with pytest.raises(ConfigError) as info:
        load(path)
    errors = info.value.errors_list()
    assert isinstance(info.value, StreamdqError)
    assert all(e.file == str(path) and isinstance(e, StreamdqError) for e in errors)
    return errors


def test_a_bad_run_config_names_each_key(tmp_path):
    from streamdq.engine.config import load_run_config

    run = tmp_path / "run.yaml"
    errors = _mistakes_in(run, RUN_CONFIG, load_run_config)
    assert [e.key for e in errors] == ["colour", "window", "state.retention_hours", "supervision.poison"]
    assert all(not e.problem.startswith(e.key) for e in errors)  # the key is not baked into the text
    assert str(errors[1]).startswith(f"{run}: window: expected a positive duration")


def test_a_bad_checks_file_names_each_key(tmp_path):
    from streamdq.checks.spec import load_suite

    errors = _mistakes_in(tmp_path / "checks.yaml", CHECKS, load_suite)
    assert [e.key for e in errors] == [
        "checks[1].constraints[1].is_unique.colum",
        "checks[1].constraints[2].has_size.assertion.between",
        "checks[2].level",
    ]
    assert errors[0].problem.startswith("unknown key 'colum' for is_unique; did you mean 'column'?")
    assert errors[0].problem.endswith("(line 9)")


def test_a_bad_check_in_a_run_config_names_its_key(tmp_path):
    """The whole-config check (``streamdq run``/``check``) reads the checks file beside the config."""
    from streamdq.engine.config_check import check_run_config

    (tmp_path / "checks.yaml").write_text(
        "checks:\n- description: d\n  constraints:\n  - has_mean: {column: a}\n"
    )
    run = tmp_path / "run.yaml"
    run.write_text(
        "dataset: orders\nsource: {type: generator}\ncheckpoint: ./chk\nchecks_file: checks.yaml\n"
        "sinks: [{type: console}]\n"
    )
    with pytest.raises(ConfigError) as info:
        check_run_config(run)
    (error,) = info.value.errors_list()
    assert error.key == "checks[0].constraints[0].has_mean.assertion"
    assert error.problem.startswith("missing required key: expected a comparison")
    assert isinstance(error, StreamdqError)


def _package_modules() -> list[str]:
    import streamdq.connectors
    import streamdq.state

    names = []
    for pkg in (streamdq, streamdq.connectors, streamdq.state):
        names += [m.name for m in pkgutil.walk_packages(pkg.__path__, f"{pkg.__name__}.")]
    return sorted(set(names))


def test_every_public_error_class_is_a_streamdq_error():
    """Every exception class the package defines (``_private`` control-flow ones aside) derives
    from StreamdqError, so ``except StreamdqError`` catches what streamdq raises on purpose."""
    found, outside = [], []
    for name in _package_modules():
        module = importlib.import_module(name)
        for attr, obj in vars(module).items():
            if (
                inspect.isclass(obj)
                and issubclass(obj, BaseException)
                and obj.__module__ == module.__name__
                and not attr.startswith("_")
            ):
                found.append(f"{name}.{attr}")
                if not issubclass(obj, StreamdqError):
                    outside.append(f"{name}.{attr}")
    assert "streamdq.errors.ConfigError" in found and "streamdq.service.errors.NotFound" in found
    assert outside == []


def test_config_mistakes_made_in_code_are_config_errors_with_keys():
    """The values the config builds (a check, a measure, an assertion, the event-time bounds)
    refuse bad input with a keyed ConfigError too, not a bare ValueError."""
    from datetime import UTC, datetime

    from streamdq.checks.assertion import Between, Comparison
    from streamdq.checks.check import Check, Level
    from streamdq.checks.measure import Measure
    from streamdq.engine.batch_size import BatchSizer
    from streamdq.engine.event_time import EventTimeBounds
    from streamdq.engine.row_level import RowLevelQuarantine

    cases = [
        (lambda: Level.parse("fatal"), "level"),
        (lambda: Check(Level.ERROR, " "), "description"),
        (lambda: Check(Level.ERROR, "d", row_level="drop"), "row_level"),
        (lambda: Check(Level.ERROR, "d").expression("n", "true", where="x > 0"), "expression.where"),
        (lambda: Measure("", "select 1 from data", "single_value"), "name"),
        (lambda: Comparison("=~", 1), "assertion"),
        (lambda: Between(2, 1), "assertion.between"),
        (lambda: EventTimeBounds(max=datetime(9999, 12, 31, tzinfo=UTC)), "event_time_bounds.max"),
        (lambda: RowLevelQuarantine([], max_rows=-1), "row_level_quarantine_max_rows"),
        (lambda: BatchSizer(small_batch_rows=-1), "small_batch_rows"),
    ]
    for make, key in cases:
        with pytest.raises(ConfigError) as info:
            make()
        assert info.value.key == key and isinstance(info.value, StreamdqError), (key, str(info.value))


def test_the_documented_example_runs(capsys):
    """docs/streaming.md, "The error contract": its Python example prints the keys it says."""
    page = (ROOT / "docs" / "streaming.md").read_text(encoding="utf-8")
    section = page.split("### The error contract", 1)[1]
    code = section.split("```python\n", 1)[1].split("```", 1)[0]
    exec(compile(code, "docs/streaming.md", "exec"), {})
    assert capsys.readouterr().out.strip() == "['window', 'state.retention_hours']"
