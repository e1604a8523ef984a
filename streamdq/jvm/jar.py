"""Build, cache and find streamdq's jar (the Java sources in ``streamdq/jvm/java``).

Where it runs: on the driver, before the SparkSession starts (``streamdq.spark.get_spark`` puts
the jar on ``spark.jars``). ``ensure_jar()`` returns the jar's path, compiling it once with
``javac`` against pyspark's own jars (and, first on the class path, the stand-ins of
``streamdq/jvm/stubs`` for Spark classes javac cannot subclass; they are not packaged), or
``None`` with the reason in :func:`last_problem` when it
cannot (no JDK, a pyspark whose internals the sources do not compile against, ``STREAMDQ_JVM=off``).
It never raises: a missing jar only means the slower built-in path.

The cache directory is ``$STREAMDQ_JVM_CACHE``, else ``~/.cache/streamdq/jvm``; each jar's name
holds a digest of the sources, the pyspark version and the JDK's ``javac`` (its real path,
size and time), so a changed source or
an upgraded Spark builds a new jar and an old one is never loaded against the wrong Spark.
Concurrent builders (test workers, two jobs starting together) are serialized by a lock file;
the jar appears by an atomic rename, whole or not at all.

Example (no JDK needed to run it: the digest is computed from the sources alone):

>>> from streamdq.jvm.jar import java_sources
>>> sorted(p.name for p in java_sources())
['JsonDecode.java', 'JsonDecodeExpression.java', 'KeyRecordingParser.java', 'ReusedPlan.java']
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import shutil
import subprocess
import tempfile
import zipfile
from pathlib import Path

JAVA_ROOT = Path(__file__).resolve().parent / "java"
# compile-time stand-ins for Spark classes javac cannot subclass from Java; never packaged
# (stubs/org/apache/spark/sql/execution/WholeStageCodegenExec.java says why)
STUB_ROOT = Path(__file__).resolve().parent / "stubs"
JAR_PREFIX = "streamdq-jvm-"

_problem: str | None = None


def java_sources() -> list[Path]:
    """The Java source files shipped with the package, in a stable order."""
    return sorted(JAVA_ROOT.rglob("*.java"))


def stub_sources() -> list[Path]:
    """The compile-time stand-ins for Spark classes (on javac's class path, not in the jar)."""
    return sorted(STUB_ROOT.rglob("*.java"))


def pyspark_jars_dir() -> Path:
    """The directory of the installed pyspark's jars (what the sources compile against)."""
    import pyspark

    return Path(pyspark.__file__).resolve().parent / "jars"


def cache_dir() -> Path:
    """Where built jars are kept (``$STREAMDQ_JVM_CACHE`` or ``~/.cache/streamdq/jvm``)."""
    env = os.environ.get("STREAMDQ_JVM_CACHE")
    return Path(env) if env else Path.home() / ".cache" / "streamdq" / "jvm"


def _java_version(javac: str) -> str:
    """Which JDK this is, without starting it (``javac -version`` costs a JVM start, paid by
    every process that opens a session): the compiler's real path, size and time."""
    real = os.path.realpath(javac)
    st = os.stat(real)
    return f"{real}:{st.st_size}:{st.st_mtime_ns}"


def jar_digest(javac_version: str) -> str:
    """A digest of the sources, the pyspark version and the compiler's version."""
    import pyspark

    h = hashlib.sha256()
    for root, paths in ((JAVA_ROOT, java_sources()), (STUB_ROOT, stub_sources())):
        for path in paths:
            h.update(path.relative_to(root).as_posix().encode())
            h.update(path.read_bytes())
    h.update(pyspark.__version__.encode())
    h.update(javac_version.encode())
    return h.hexdigest()[:16]


def last_problem() -> str | None:
    """Why the last :func:`ensure_jar` returned ``None`` (``None`` after a success)."""
    return _problem


def enabled() -> bool:
    """False when ``STREAMDQ_JVM`` is ``off`` (or ``0``/``false``): streamdq then uses Spark's
    built-ins only."""
    return os.environ.get("STREAMDQ_JVM", "on").strip().lower() not in ("off", "0", "false", "no")


def ensure_jar() -> Path | None:
    """The path of streamdq's jar for this pyspark, built if needed; ``None`` when it cannot be
    (see :func:`last_problem`). Never raises."""
    global _problem
    _problem = None
    if not enabled():
        _problem = "STREAMDQ_JVM is off"
        return None
    javac = shutil.which("javac")
    if javac is None:
        _problem = "no javac on PATH (install a JDK, e.g. openjdk-17-jdk-headless)"
        return None
    try:
        version = _java_version(javac)
        target = cache_dir() / f"{JAR_PREFIX}{jar_digest(version)}.jar"
        if target.is_file():
            return target
        target.parent.mkdir(parents=True, exist_ok=True)
        with open(target.parent / ".lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            if not target.is_file():  # another process may have built it while we waited
                _build(javac, target)
        return target
    except Exception as exc:  # a compile error, a full disk: the built-in path still works
        _problem = f"could not build the jar: {exc}"
        return None


def _javac(javac: str, out_dir: Path, classpath: str, sources: list[Path]) -> None:
    cmd = [
        javac,
        "-nowarn",
        "-encoding",
        "UTF-8",
        "--release",
        "17",
        "-d",
        str(out_dir),
        "-cp",
        classpath,
        *[str(p) for p in sources],
    ]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    if out.returncode != 0:
        lines = (out.stderr or out.stdout).strip().splitlines()
        raise RuntimeError("javac failed: " + " | ".join(lines[:6]))


def _build(javac: str, target: Path) -> None:
    with tempfile.TemporaryDirectory(prefix="streamdq-jvm-") as tmp:
        classes, stubs = Path(tmp) / "classes", Path(tmp) / "stubs"
        classes.mkdir()
        stubs.mkdir()
        spark_jars = str(pyspark_jars_dir() / "*")
        stand_ins = stub_sources()
        if stand_ins:
            _javac(javac, stubs, spark_jars, stand_ins)
        # the stubs come first on the class path: javac sees them instead of Spark's classes
        _javac(javac, classes, os.pathsep.join([str(stubs), spark_jars]), java_sources())
        staged = Path(tmp) / target.name
        with zipfile.ZipFile(staged, "w", zipfile.ZIP_DEFLATED) as z:
            z.writestr("META-INF/MANIFEST.MF", "Manifest-Version: 1.0\nCreated-By: streamdq\n")
            for cls in sorted(classes.rglob("*.class")):
                z.write(cls, cls.relative_to(classes).as_posix())
        tmp_target = target.with_suffix(".jar.tmp")
        shutil.copyfile(staged, tmp_target)
        os.replace(tmp_target, target)
        with contextlib.suppress(OSError):  # older jars of this package: no longer loadable
            for old in target.parent.glob(f"{JAR_PREFIX}*.jar"):
                if old != target and old.stat().st_mtime < target.stat().st_mtime - 86400 * 30:
                    old.unlink()
