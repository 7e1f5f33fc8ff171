"""The Spark pipeline: result files and fuzz findings in, the compliance dataset and report bundle out.

- ``session``: the SparkSession (local[*] by default, any cluster by ``--spark-master``).
- ``ingest``: robust reading of JSON-lines results and finding files; every bad line is counted.
- ``dataset``: cleaning and the one-row-per-(run, broker, version, case, clause) table.
- ``aggregates``: the report's numbers (compliance, matrix, history, changes, flaky, findings).
- ``job``: all of it end to end (``run_job``), used by ``amqpspec report``.

``bundle.md`` in this folder documents the bundle and dataset layout the HTML renderer reads.
PySpark is imported only inside functions, so importing this package costs nothing without it.
"""
