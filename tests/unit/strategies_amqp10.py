"""The AMQP 1.0 strategies of the codec tests: the fuzzer's own (``amqpspec.fuzz.strategies10``).

They live in the fuzz package so that the round-trip tests and the fuzzer draw from one
definition; this module only re-exports them under the name the tests import.
"""
from amqpspec.fuzz.strategies10 import *  # noqa: F401,F403
from amqpspec.fuzz.strategies10 import __all__, _symbol  # noqa: F401
