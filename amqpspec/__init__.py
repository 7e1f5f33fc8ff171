"""amqpspec: conformance and fuzz testing for AMQP 0-9-1 and AMQP 1.0 brokers."""

__version__ = "0.1.0"
