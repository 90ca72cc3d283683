"""The streaming query: sources → parse (per file) → keyed reasoning (per bucket, in Spark state) → sink.

::

    files / socket ──mapInPandas(parse)──▶ (label, event rows, ticks, controls)
        ──groupBy(label).applyInPandasWithState(bucket)──▶ report rows ──foreachBatch(merge, sink)

Control commands (``advance`` to a watermark, ``close`` the streams) are small JSON files in the checkpoint's
``control/`` directory, read as one more file stream: they are part of Spark's source log, so a restarted job
replays them exactly where they were.
"""

from __future__ import annotations

import json
import os
import pickle
import sys
from functools import partial

from .inputs import SCHEMA, parse_partition
from .keys import balanced_labels
from .session import spark_session
from .sinks import JobFailed, merge
from .spec import JobSpec
from .units import OUT_SCHEMA, STATE_SCHEMA, process_group


class SparkJob:
    """One continuous job: ``spec`` on ``master``, state and source logs under ``checkpoint``, outputs to
    ``sink`` (a callable ``sink(batch_id, outputs)``)."""

    def __init__(self, spec: JobSpec, sink, checkpoint: str, *, master: str = "local[2]",
                 partitions: int | None = None, max_files_per_trigger: int | None = None,
                 warn=None, make_report=None) -> None:
        self.session = spark_session(master, partitions)
        self.partitions = int(self.session.conf.get("spark.sql.shuffle.partitions"))
        self.checkpoint = os.path.abspath(checkpoint)
        self.control = os.path.join(self.checkpoint, "control")
        os.makedirs(self.control, exist_ok=True)
        meta = os.path.join(self.checkpoint, "rdfstream.json")
        if os.path.exists(meta):  # a restart: the key layout must be the one the state was written with
            with open(meta, encoding="utf-8") as handle:
                saved = json.load(handle)
            if saved["token"] != spec.token:
                from ...errors import UsageError

                raise UsageError(f"checkpoint {checkpoint} belongs to another job (other queries, streams or"
                                 " keys): use a new checkpoint directory, or delete this one to start over")
            spec.labels = tuple(saved["labels"])
        else:
            spec.labels = balanced_labels(spec.keying.buckets, self.partitions)
            with open(meta, "w", encoding="utf-8") as handle:
                json.dump({"token": spec.token, "labels": list(spec.labels)}, handle)
        self.spec = spec
        self.sink = sink
        self.make_report = make_report
        self.warn = warn or (lambda message: print(f"warning: {message}", file=sys.stderr))
        self.max_files = max_files_per_trigger
        self.failure: Exception | None = None
        self.blob = self.session.sparkContext.broadcast(pickle.dumps(spec, protocol=5))
        self.query = None

    # ---------------------------------------------------------------- the streaming query

    def _sources(self):
        from pyspark.sql import functions as F

        reader = self.session.readStream
        frames = []
        for i, stream in enumerate(self.spec.streams):
            if stream.path.startswith("socket://"):
                host, _, port = stream.path[len("socket://"):].partition(":")
                df = (reader.format("socket").option("host", host).option("port", int(port)).load()
                      .select(F.col("value"), F.lit(stream.path).alias("path")))
            else:
                df = self._files(stream.path).select("value", F.col("_metadata.file_path").alias("path"))
            frames.append(df.withColumn("src", F.lit(i)))
        control = self._files(self.control, control=True).select("value", F.col("_metadata.file_path").alias("path"))
        frames.append(control.withColumn("src", F.lit(-1)))
        union = frames[0]
        for df in frames[1:]:
            union = union.unionByName(df)
        return union

    def _files(self, path: str, control: bool = False):
        reader = self.session.readStream.format("text").option("wholetext", True)
        if self.max_files and not control:
            reader = reader.option("maxFilesPerTrigger", self.max_files)
        if os.path.isfile(path):  # one file: its directory, filtered to its name
            reader = reader.option("pathGlobFilter", os.path.basename(path))
            path = os.path.dirname(os.path.abspath(path))
        return reader.load(path)

    def _on_batch(self, df, batch_id: int) -> None:
        try:
            outputs, warnings = merge(df.collect(), self.spec.kind, self.make_report)
            for message in warnings:
                self.warn(message)
            self.sink(batch_id, outputs)
        except Exception as err:
            self.failure = err
            raise

    def start(self, interval: str = "0 seconds"):
        """Start the streaming query; it runs until :meth:`stop` (micro-batches as data comes)."""
        from pyspark.sql.streaming.state import GroupStateTimeout

        spec = self.spec
        parsed = self._sources().mapInPandas(partial(parse_partition, spec), SCHEMA)
        reasoned = parsed.groupBy("label").applyInPandasWithState(
            partial(process_group, self.blob, spec.token), OUT_SCHEMA, STATE_SCHEMA, "append",
            GroupStateTimeout.NoTimeout)
        writer = (reasoned.writeStream.foreachBatch(self._on_batch)
                  .option("checkpointLocation", os.path.join(self.checkpoint, "spark")))
        writer = writer.trigger(processingTime=interval)
        self.failure = None
        self.query = writer.start()
        return self.query

    def run_all(self, follow: bool) -> None:
        """Without ``follow``: process what the sources hold, then close the streams (:meth:`finish`).  With it:
        keep processing new data until interrupted (Ctrl-C) or stopped; the streams stay open."""
        if not follow:
            self.finish()
            return
        self.start()
        try:
            self.wait()
        except KeyboardInterrupt:
            self.stop()

    def drain(self) -> None:
        """Keep the query running (started once) and return when everything the sources hold is processed."""
        if self.query is None or not self.query.isActive:
            self.start()
        from pyspark.errors import StreamingQueryException

        try:
            self.query.processAllAvailable()
        except StreamingQueryException as err:
            raise self._failed(err) from None
        if self.failure is not None:
            raise self.failure

    def wait(self, timeout: float | None = None) -> None:
        from pyspark.errors import StreamingQueryException

        try:
            if timeout is None:
                self.query.awaitTermination()
            else:
                self.query.awaitTermination(timeout)
        except StreamingQueryException as err:
            raise self._failed(err) from None
        if self.failure is not None:
            raise self.failure

    def _failed(self, err: Exception) -> Exception:
        self.stop()
        if self.failure is not None:
            return self.failure
        from ...errors import EvaluationError

        return EvaluationError(f"the Spark job failed: {_first_line(err)}")

    def stop(self) -> None:
        if self.query is not None and self.query.isActive:
            self.query.stop()

    # ---------------------------------------------------------------- control

    def command(self, command: dict) -> None:
        """Queue a control command (``{"advance": t}`` or ``{"close": true}``) for the next micro-batch."""
        done = sorted(f for f in os.listdir(self.control) if not f.startswith("."))
        if command.get("close") and any(f.endswith("-close.json") for f in done):
            return  # closed already (a restarted job): the command is in the source log
        name = f"{len(done) + 1:06d}-{'close' if command.get('close') else 'advance'}.json"
        tmp = os.path.join(self.control, "." + name)
        with open(tmp, "w", encoding="utf-8") as handle:
            json.dump(command, handle)
        os.replace(tmp, os.path.join(self.control, name))

    def closed(self) -> bool:
        return any(f.endswith("-close.json") for f in os.listdir(self.control))

    def finish(self) -> None:
        """Run what is there, then close the streams (the remaining reports); one streaming query does both.

        Without a per-batch file limit everything there fits one micro-batch, so the close command goes with
        it (a bucket runs a batch's data before its commands); with a limit it follows once all is processed."""
        try:
            if self.max_files is None and not self.closed():
                self.command({"close": True})
            self.drain()
            if not self.closed():
                self.command({"close": True})
                self.drain()
        finally:
            self.stop()


def _first_line(err: Exception) -> str:
    text = str(err).strip().splitlines()
    return text[0] if text else type(err).__name__


__all__ = ["JobFailed", "SparkJob"]
