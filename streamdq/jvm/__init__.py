"""streamdq's own JVM code: Java sources shipped with the package, compiled on this machine.

Maven Central is out of reach and a compiled jar is not kept in the repository, so the Java
sources under ``java/`` are compiled with the machine's ``javac`` against the installed
pyspark's jars the first time a session needs them (``streamdq.jvm.jar.ensure_jar``), into a
cache keyed by the sources, the pyspark version and the Java version. Without a JDK everything
keeps working on Spark's built-ins alone (each user says which path it took).

What is here: ``io.streamdq.JsonDecode``, the single-pass JSON decoder used by
``streamdq.connectors.sources.decode.decode_json`` (docs/sources.md, "The JSON decoder").
"""
