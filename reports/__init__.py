"""Reporters: turn result records (``amqpspec.result.Result``) into things people read.

Every reporter reads the same records, so a run can be reported live on the console and
again later, from the JSON-lines result file, as JUnit XML or HTML.

- ``amqpspec.reports.console``: the live progress display and the final tree by spec section.
- ``amqpspec.reports.junit``: JUnit XML for CI test-report viewers.

Submodules are not imported here so that a reporter's dependencies are only paid for by
the code that uses it.
"""
