"""The AMQP 0-9-1 strategies of the codec tests: the fuzzer's own (``amqpspec.fuzz.strategies091``).

They live in the fuzz package so that the round-trip tests and the fuzzer draw from one
definition; this module only re-exports them under the name the tests import.
"""
from amqpspec.fuzz.strategies091 import *  # noqa: F401,F403
from amqpspec.fuzz.strategies091 import __all__  # noqa: F401
