"""streamdq's jar is built once per sources/Spark/JDK, found again, and its absence is explained."""

from __future__ import annotations

import shutil
import zipfile

from streamdq.jvm import jar
from tests.conftest import require_integration


def test_the_jar_is_built_once_and_reused(tmp_path, monkeypatch):
    if shutil.which("javac") is None:
        require_integration("javac", "no JDK on PATH")
    monkeypatch.setenv("STREAMDQ_JVM_CACHE", str(tmp_path))
    monkeypatch.delenv("STREAMDQ_JVM", raising=False)
    built = jar.ensure_jar()
    assert built is not None, jar.last_problem()
    assert built.parent == tmp_path and built.name.startswith(jar.JAR_PREFIX)
    with zipfile.ZipFile(built) as z:
        names = set(z.namelist())
    assert {"io/streamdq/JsonDecode.class", "io/streamdq/KeyRecordingParser.class"} <= names
    assert "io/streamdq/ReusedPlan$KeptCodegen.class" in names
    assert not any(n.startswith("org/") for n in names)  # the compile-time stubs stay out of it
    stamp = built.stat().st_mtime_ns
    assert jar.ensure_jar() == built and built.stat().st_mtime_ns == stamp  # reused, not rebuilt
    assert not list(tmp_path.glob("*.tmp"))  # the jar appeared by rename, nothing left behind


def test_no_javac_gives_none_and_says_why(tmp_path, monkeypatch):
    monkeypatch.setenv("STREAMDQ_JVM_CACHE", str(tmp_path))
    monkeypatch.setenv("PATH", str(tmp_path))  # a PATH without a JDK
    assert jar.ensure_jar() is None
    assert "javac" in (jar.last_problem() or "")
    assert not list(tmp_path.glob("*.jar"))


def test_switched_off_by_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("STREAMDQ_JVM_CACHE", str(tmp_path))
    monkeypatch.setenv("STREAMDQ_JVM", "off")
    assert jar.ensure_jar() is None and "off" in (jar.last_problem() or "")


def test_the_digest_follows_the_sources_and_the_compiler():
    assert jar.jar_digest("javac 17") == jar.jar_digest("javac 17")
    assert jar.jar_digest("javac 17") != jar.jar_digest("javac 21")
    assert [p.suffix for p in jar.java_sources()] == [".java"] * len(jar.java_sources()) != []
    assert [p.name for p in jar.stub_sources()] == ["WholeStageCodegenExec.java"]
