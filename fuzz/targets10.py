"""The AMQP 1.0 fuzz targets (defined below, registered on import)."""
from __future__ import annotations
