"""AMQP 0-9-1 cases. Modules are named after the spec section (sNN_...) or the class and
method (class_...) whose clauses they check; importing a module registers its cases."""
