"""The case catalog: one package per protocol, one module per spec section."""
