"""``python -m amqpspec.brokers``: the same commands as ``amqpspec brokers``."""

from amqpspec.brokers.cli import main

if __name__ == "__main__":
    main()
