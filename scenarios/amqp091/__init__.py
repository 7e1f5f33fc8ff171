"""AMQP 0-9-1 scenarios driven by real clients (pika), registered as cases like the catalog."""
