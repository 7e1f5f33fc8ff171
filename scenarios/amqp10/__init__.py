"""AMQP 1.0 scenarios driven by a real client (python-qpid-proton), registered as cases."""
