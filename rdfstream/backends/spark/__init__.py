"""The Spark backend: the embedded engine's programs and queries on Spark Structured Streaming.

Layout (``docs/spark.md`` tells the whole story):

* :mod:`.keys` — how stream atoms are routed to keys (buckets) and which part owns a solution;
* :mod:`.inputs` — executor side: stream files (any supported format) parsed into keyed event rows;
* :mod:`.units` — executor side: one bucket's reasoning, an embedded engine kept in Spark keyed state;
* :mod:`.sinks` — driver side: the buckets' reports merged per timestamp, written exactly once;
* :mod:`.session` and :mod:`.job` — the Spark session and the streaming query that wires it together;
* :mod:`.plan` — from a CLI command or an API engine to a job description.

Only :mod:`.session` and :mod:`.job` import pyspark, and only when a Spark job is built.
"""
