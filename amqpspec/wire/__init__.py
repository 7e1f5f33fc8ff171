"""Wire layer: codecs for AMQP 0-9-1 (and later 1.0) that can also produce malformed bytes."""
