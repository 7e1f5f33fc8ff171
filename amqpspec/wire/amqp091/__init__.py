"""AMQP 0-9-1 wire codec, generated from the specification XML (see ``gen.py``).

Typical use::

    from amqpspec.wire.amqp091 import spec, MethodFrame, FrameReader
    frame = MethodFrame(1, spec.QueueDeclare(queue="q", durable=True))
    data = frame.encode()
"""
from amqpspec.wire.amqp091 import spec
from amqpspec.wire.amqp091.base import Field, Method, Properties, UnknownMethod
from amqpspec.wire.amqp091.frames import (
    FRAME_END, FRAME_OVERHEAD, PROTOCOL_HEADER, BodyFrame, Frame, FrameReader, HeaderFrame,
    HeartbeatFrame, MalformedFrame, MethodFrame, ProtocolHeader, RawFrame, decode_frame,
    decode_method, describe, encode,
)
from amqpspec.wire.amqp091.table import (
    DIALECTS, RABBITMQ, SPEC, Dialect, FieldArray, FieldTable, FieldValue, decode_array,
    decode_table, encode_array, encode_table, to_plain,
)
from amqpspec.wire.raw import Raw, Sized

__all__ = [
    "spec", "Field", "Method", "Properties", "UnknownMethod", "FRAME_END", "FRAME_OVERHEAD",
    "PROTOCOL_HEADER", "BodyFrame", "Frame", "FrameReader", "HeaderFrame", "HeartbeatFrame",
    "MalformedFrame", "MethodFrame", "ProtocolHeader", "RawFrame", "decode_frame", "decode_method",
    "describe", "encode", "DIALECTS", "RABBITMQ", "SPEC", "Dialect", "FieldArray", "FieldTable",
    "FieldValue", "decode_array", "decode_table", "encode_array", "encode_table", "to_plain", "Raw", "Sized",
]
