"""Other engines that run the same compiled programs and queries: :mod:`.spark` (Apache Spark, via PySpark)."""
