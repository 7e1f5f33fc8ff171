"""AMQP 1.0 client cases: amqpspec plays the broker (a container with nodes) and judges the client.

Run by ``amqpspec client --protocol 1.0`` (and ``amqpspec serve``), never by ``amqpspec
run``: every case is registered with ``role="client"``. Files are named after the spec
sections their clauses come from, as in ``conformance/amqp10``. A case launches a workload
of the driver contract (docs/drivers.md), plays the node's side through the 1.0 server peer
-- correct answers from the responder except where the case misbehaves on purpose -- and
judges what the client sends, citing the clauses whose text binds the client (or any peer).
"""
