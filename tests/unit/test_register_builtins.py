"""Analyzers, state types and detectors are registered by explicit ``register_builtins()`` calls
(issue 21 item 1; pandera's ``register.py``), never by importing a module.

* A fresh interpreter that imports the modules (and the packages) finds every registry empty until
  ``register_builtins()`` runs (a subprocess, so this process's registries don't count).
* After it, every built-in is there: the lists of ``register_builtins`` are compared with a scan of
  the packages' classes, so a new class forgotten there fails here.
* It is idempotent and thread-safe; the look-ups call it first; a user class is registered by a
  plain call, and a name a built-in holds is refused.
"""

from __future__ import annotations

import dataclasses
import inspect
import subprocess
import sys
from typing import ClassVar

import pytest

import streamdq.analyzers
import streamdq.detectors
from streamdq.analyzers import register as analyzers_register
from streamdq.analyzers.aggregation import Aggregation
from streamdq.analyzers.base import (
    Analyzer,
    AnalyzerNameTaken,
    analyzer_types,
    register_analyzer,
    unregister_analyzer,
)
from streamdq.analyzers.mean import Mean
from streamdq.analyzers.state import State, StateTagTaken, register_state, state_types, unregister_state
from streamdq.detectors import register as detectors_register
from streamdq.detectors.base import Detector, DetectorTypeTaken, detector_classes, register_detector
from streamdq.testing.laws import classes_in


def _run(code: str) -> str:
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return out.stdout.strip()


def test_importing_registers_nothing_until_register_builtins_is_called() -> None:
    code = (
        "import streamdq.analyzers.mean, streamdq.analyzers.basic_states, streamdq.detectors.online_normal\n"
        "import streamdq.analyzers, streamdq.detectors, streamdq.analyzers.register, streamdq.detectors.register\n"
        "from streamdq.analyzers.base import analyzer_types\n"
        "from streamdq.analyzers.state import state_types\n"
        "from streamdq.detectors.base import detector_classes\n"
        "print(len(analyzer_types()), len(state_types()), len(detector_classes()))\n"
        "streamdq.analyzers.register.register_builtins()\n"
        "streamdq.detectors.register.register_builtins()\n"
        "print(len(analyzer_types()), len(state_types()), len(detector_classes()))\n"
    )
    before, after = _run(code).splitlines()
    assert before == "0 0 0"
    assert after == (
        f"{len(analyzers_register.BUILTIN_ANALYZERS)} {len(analyzers_register.BUILTIN_STATES)} "
        f"{len(detectors_register.BUILTIN_DETECTORS)}"
    )


def test_the_look_ups_register_the_builtins_first() -> None:
    code = (
        "from streamdq.analyzers.register import state_from_bytes\n"
        "from streamdq.analyzers.basic_states import SumState\n"
        "from streamdq.analyzers import analyzer_from_spec\n"
        "from streamdq.detectors import detector_from_spec\n"
        "print(state_from_bytes(SumState(2.0).to_bytes()))\n"
        "print(analyzer_from_spec({'analyzer': 'Mean', 'column': 'x'}))\n"
        "print(detector_from_spec({'type': 'simple_threshold', 'upper_bound': 1}).TYPE)\n"
    )
    assert _run(code).splitlines() == [
        "SumState(total=2.0, n=0)",
        "Mean(column='x', where=None)",
        "simple_threshold",
    ]


def _concrete(cls: type) -> bool:
    return not inspect.isabstract(cls)


def test_every_analyzer_class_of_the_package_is_a_builtin() -> None:
    scanned = classes_in(
        streamdq.analyzers, lambda c: issubclass(c, Analyzer) and "NAME" in c.__dict__ and _concrete(c)
    )
    assert set(scanned.values()) == set(analyzers_register.BUILTIN_ANALYZERS)
    names = analyzers_register.registered_analyzers()
    assert all(names[cls.NAME] is cls for cls in scanned.values())


def test_every_state_class_of_the_package_is_a_builtin() -> None:
    # a class that defines its own TYPE_TAG; aggregations (streamdq.aggregations) register theirs
    # when their name resolves, and the concrete forms of FrequencyState share its tag
    scanned = classes_in(
        streamdq.analyzers,
        lambda c: issubclass(c, State) and "TYPE_TAG" in c.__dict__ and not issubclass(c, Aggregation),
    )
    assert set(scanned.values()) == set(analyzers_register.BUILTIN_STATES)
    tags = analyzers_register.registered_states()
    assert all(tags[cls.TYPE_TAG] is cls for cls in scanned.values())


def test_every_detector_class_of_the_package_is_a_builtin() -> None:
    scanned = classes_in(
        streamdq.detectors, lambda c: issubclass(c, Detector) and "TYPE" in c.__dict__ and _concrete(c)
    )
    assert set(scanned.values()) == set(detectors_register.BUILTIN_DETECTORS)
    types = detectors_register.registered_detectors()
    assert all(types[cls.TYPE] is cls for cls in scanned.values())


def test_register_builtins_is_idempotent_and_thread_safe() -> None:
    code = (
        "import threading\n"
        "from streamdq.analyzers.register import register_builtins as a, BUILTIN_ANALYZERS\n"
        "from streamdq.detectors.register import register_builtins as d\n"
        "from streamdq.analyzers.base import analyzer_types\n"
        "from streamdq.detectors.base import detector_classes\n"
        "seen = []\n"
        "def go():\n"
        "    a(); d(); seen.append((len(analyzer_types()), len(detector_classes())))\n"
        "threads = [threading.Thread(target=go) for _ in range(16)]\n"
        "[t.start() for t in threads]; [t.join() for t in threads]\n"
        "a(); d()\n"
        "print(len(set(seen)), seen[0] == (len(analyzer_types()), len(detector_classes())))\n"
    )
    assert _run(code) == "1 True"


def test_a_user_analyzer_is_registered_by_a_plain_call_and_a_builtin_name_is_refused() -> None:
    @dataclasses.dataclass(frozen=True)
    class Custom(Mean):
        NAME: ClassVar[str] = "test_register_Custom"

    @dataclasses.dataclass(frozen=True)
    class Impostor(Mean):
        NAME: ClassVar[str] = "Mean"

    analyzers_register.register_builtins()
    assert register_analyzer(Custom) is Custom
    try:
        assert register_analyzer(Custom) is Custom  # again: nothing happens
        assert analyzers_register.analyzer_from_spec({"analyzer": Custom.NAME, "column": "x"}) == Custom("x")
        with pytest.raises(AnalyzerNameTaken, match="'Mean' registered twice"):
            register_analyzer(Impostor)
        assert analyzer_types()["Mean"] is Mean
        assert not unregister_analyzer(Impostor)  # Mean holds the name: nothing changes
        assert analyzer_types()["Mean"] is Mean
    finally:
        # the registry is process-wide: suites run later (every analyzer has an example) must not see it
        assert unregister_analyzer(Custom)
    assert Custom.NAME not in analyzer_types() and not unregister_analyzer(Custom)
    with pytest.raises(KeyError, match="unknown analyzer 'test_register_Custom'"):
        analyzers_register.analyzer_from_spec({"analyzer": Custom.NAME, "column": "x"})


def test_a_user_state_is_unregistered_by_its_class() -> None:
    from streamdq.analyzers.basic_states import SumState

    @dataclasses.dataclass(frozen=True)
    class Custom(SumState):
        TYPE_TAG: ClassVar[str] = "test_register_CustomSum"

    @dataclasses.dataclass(frozen=True)
    class Impostor(SumState):
        TYPE_TAG: ClassVar[str] = "Sum"

    analyzers_register.register_builtins()
    assert register_state(Custom) is Custom
    try:
        assert state_types()[Custom.TYPE_TAG] is Custom
        assert not unregister_state(Impostor)  # SumState holds the tag: nothing changes
    finally:
        assert unregister_state(Custom)
    assert Custom.TYPE_TAG not in state_types() and not unregister_state(Custom)
    assert state_types()["Sum"] is SumState


def test_a_builtin_state_tag_is_refused_to_another_class() -> None:
    from streamdq.analyzers.basic_states import SumState

    @dataclasses.dataclass(frozen=True)
    class Impostor(SumState):
        TYPE_TAG: ClassVar[str] = "Sum"

    analyzers_register.register_builtins()
    with pytest.raises(StateTagTaken, match="'Sum' registered twice"):
        register_state(Impostor)
    assert state_types()["Sum"] is SumState


def test_a_builtin_detector_type_is_refused_to_another_class() -> None:
    from streamdq.detectors import SimpleThreshold

    @dataclasses.dataclass(frozen=True)
    class Impostor(SimpleThreshold):
        TYPE: ClassVar[str] = "simple_threshold"

    detectors_register.register_builtins()
    with pytest.raises(DetectorTypeTaken, match="'simple_threshold' registered twice"):
        register_detector(Impostor)
    assert detector_classes()["simple_threshold"] is SimpleThreshold


def test_register_builtins_under_concurrent_look_ups() -> None:
    """Look-ups from many threads all see every built-in (none sees a half-filled registry)."""
    code = (
        "import threading\n"
        "from streamdq.analyzers.register import registered_states, BUILTIN_STATES\n"
        "counts = []\n"
        "def go(): counts.append(len(registered_states()))\n"
        "threads = [threading.Thread(target=go) for _ in range(16)]\n"
        "[t.start() for t in threads]; [t.join() for t in threads]\n"
        "print(set(counts) == {len(BUILTIN_STATES)})\n"
    )
    assert _run(code) == "True"


def test_a_builtin_name_is_refused_even_before_the_builtins_are_registered() -> None:
    """The public register_* calls register the built-ins first: in a fresh process, a user class
    under "Mean" (or a built-in detector type) is refused at once, and the look-ups keep working."""
    code = (
        "import dataclasses\n"
        "from typing import ClassVar\n"
        "from streamdq.analyzers import register_analyzer\n"
        "from streamdq.analyzers.mean import Mean\n"
        "from streamdq.analyzers.register import analyzer_class\n"
        "from streamdq.detectors import register_detector, SimpleThreshold\n"
        "from streamdq.detectors.register import registered_detectors\n"
        "@dataclasses.dataclass(frozen=True)\n"
        "class Impostor(Mean):\n"
        "    NAME: ClassVar[str] = 'Mean'\n"
        "@dataclasses.dataclass(frozen=True)\n"
        "class Fake(SimpleThreshold):\n"
        "    TYPE: ClassVar[str] = 'simple_threshold'\n"
        "out = []\n"
        "for register, cls in ((register_analyzer, Impostor), (register_detector, Fake)):\n"
        "    try:\n"
        "        register(cls)\n"
        "        out.append('accepted')\n"
        "    except ValueError as exc:\n"
        "        out.append(type(exc).__name__)\n"
        "print(*out, analyzer_class('Mean') is Mean, analyzer_class('Sum').NAME,\n"
        "      registered_detectors()['simple_threshold'] is SimpleThreshold)\n"
    )
    assert _run(code) == "AnalyzerNameTaken DetectorTypeTaken True Sum True"


def test_a_builtin_shadowed_through_the_raw_registry_is_reported_once() -> None:
    """A class registered under a built-in's name through the raw registry (analyzers.base),
    before the built-ins: the first look-up says so, and the look-ups work after it."""
    code = (
        "import dataclasses\n"
        "from typing import ClassVar\n"
        "from streamdq.analyzers.base import register_analyzer as raw\n"
        "from streamdq.analyzers.mean import Mean\n"
        "from streamdq.analyzers.register import analyzer_class\n"
        "@dataclasses.dataclass(frozen=True)\n"
        "class Impostor(Mean):\n"
        "    NAME: ClassVar[str] = 'Mean'\n"
        "raw(Impostor)\n"
        "try:\n"
        "    analyzer_class('Sum')\n"
        "    first = 'no error'\n"
        "except ValueError as exc:\n"
        "    first = type(exc).__name__ + (' names Mean' if \"'Mean'\" in str(exc) else '')\n"
        "print(first, '|', analyzer_class('Sum').NAME, analyzer_class('Mean') is Impostor)\n"
    )
    assert _run(code) == "AnalyzerNameTaken names Mean | Sum True"
