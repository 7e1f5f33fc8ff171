"""A warm Spark for ``amqpspec report``: one local process keeps its SparkSession between reports.

Why: a report of one run spends most of its time in a cold JVM (starting Spark, loading and
JIT-compiling its classes, planning the first queries), not on the data -- measured on 2 cores:
23 s for the first run of the pipeline in a process, 9-11 s for each next one in the same
process. A service kept for a few idle minutes gives every report after the first the warm
figure, the way Gradle's daemon does for builds.

- ``channel``: the private runtime folder, the socket, the settings key, the message framing.
- ``server``: the service (``python -m amqpspec.reports.warm.server``), one report at a time.
- ``client``: what ``amqpspec report`` does to find, start, use and stop the service.
- ``cli``: ``amqpspec spark status`` / ``amqpspec spark stop``.
"""
