"""AMQP 1.0 cases, in modules named after the spec section whose clauses they check (s2_4_..)."""
