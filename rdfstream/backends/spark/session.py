"""The Spark session: created once per process, lazily, with the settings a small cluster or a laptop needs.

Settings (each may be overridden with ``conf``): no web UI and no console progress bar; the Python of this
process on the executors (pandas-based stateful operators need its pandas and pyarrow); shuffle partitions
= the master's cores (the default of 200 makes every stateful micro-batch run 200 tasks).
"""

from __future__ import annotations

import os
import re
import sys

from ...errors import UsageError

_session = None


def parallelism(master: str) -> int:
    """The number of cores a master URL asks for (``local[4]`` → 4; clusters: 2 per default, see --partitions)."""
    m = re.fullmatch(r"local(?:\[(\*|\d+)(?:,\s*\d+)?\])?", master.strip())
    if m is None:
        return 2
    if m.group(1) is None:
        return 1
    return (os.cpu_count() or 1) if m.group(1) == "*" else int(m.group(1))


def spark_session(master: str = "local[2]", partitions: int | None = None, conf: dict | None = None):
    """The process's Spark session for ``master`` (a running session on another master is stopped first)."""
    global _session
    import logging

    logging.getLogger("py4j").setLevel(logging.CRITICAL)  # a failed batch is reported by rdfstream, once
    try:
        from pyspark.sql import SparkSession
    except ImportError:
        raise UsageError("the Spark engine needs pyspark: pip install 'rdfstream[spark]'") from None
    if _session is not None:
        if _session.sparkContext.master == master and not conf:
            if partitions is not None:
                _session.conf.set("spark.sql.shuffle.partitions", str(partitions))
            return _session
        _session.stop()
        _session = None
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    if master.startswith("local"):
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    settings = {
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false",
        "spark.sql.shuffle.partitions": str(partitions or parallelism(master)),
        "spark.sql.execution.arrow.pyspark.enabled": "true",
        "spark.python.worker.reuse": "true",
        "spark.sql.streaming.noDataMicroBatches.enabled": "false",
        # stream files are packed into parse tasks by size: four tasks per partition even out the files' sizes
        # (one task per file costs more in task overhead than it gains)
        "spark.sql.files.minPartitionNum": str(4 * (partitions or parallelism(master))),
    }
    log4j = os.path.join(os.path.dirname(os.path.abspath(__file__)), "log4j2.properties")
    settings["spark.driver.extraJavaOptions"] = f"-Dlog4j2.configurationFile=file:{log4j}"
    settings.update(conf or {})
    builder = SparkSession.builder.master(master).appName("rdfstream")
    for key, value in settings.items():
        builder = builder.config(key, value)
    try:
        _session = builder.getOrCreate()
    except Exception as err:  # no Java, a master that does not answer, a port in use: one line, not a trace
        first = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        raise UsageError(f"cannot start Spark on {master}: {first} (Spark needs Java 17 on the PATH or in"
                         " JAVA_HOME)") from None
    # rdfstream reports a failed job itself (file:line:col: message); Spark's own log is for debugging
    _session.sparkContext.setLogLevel(os.environ.get("RDFSTREAM_SPARK_LOG", "OFF"))
    return _session


def stop_session() -> None:
    global _session
    if _session is not None:
        _session.stop()
        _session = None
