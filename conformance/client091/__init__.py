"""AMQP 0-9-1 client cases: amqpspec plays the broker and judges the client library.

Run by ``amqpspec client`` (and ``amqpspec serve``), never by ``amqpspec run``: every case
is registered with ``role="client"``. Files are named after the spec sections their
clauses come from, as in ``conformance/amqp091``. A case launches a workload of the driver
contract (docs/drivers.md), plays the broker's side through the server peer -- correct
answers from the responder except where the case misbehaves on purpose -- and judges what
the client sends, citing the clauses whose text says what a client must do.
"""
