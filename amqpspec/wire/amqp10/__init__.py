"""AMQP 1.0 wire codec, generated from the OASIS XML (see ``gen.py``).

Typical use::

    from amqpspec.wire.amqp10 import spec, AMQPFrame, FrameReader, Message
    frame = AMQPFrame(0, spec.Open(container_id="amqpspec", max_frame_size=65536))
    data = frame.encode()

* ``types``: the type system (value classes, encodings, bounded decoder, override wrappers);
* ``spec``: generated classes of every described type (performatives, SASL frames, sections,
  delivery states, source/target, error, transactions) and the restricted types' choices;
* ``frames``: frames, protocol headers and the stream reader; ``message``: messages.
"""
from amqpspec.wire.amqp10 import spec, types
from amqpspec.wire.amqp10.composite import Choices, Composite, DescribedBase, Field, Restricted, show
from amqpspec.wire.amqp10.frames import (
    AMQP_HEADER, FRAME_AMQP, FRAME_SASL, SASL_HEADER, TLS_HEADER, AMQPFrame, EmptyFrame, Frame, FrameReader,
    MalformedFrame, ProtocolHeader, RawFrame, SASLFrame, decode_body, decode_frame, describe, encode, frame,
    transfer_frames,
)
from amqpspec.wire.amqp10.message import Message, encode_sections
from amqpspec.wire.amqp10.types import (
    UNDESCRIBED, Array, Byte, Char, Counted, Decimal32, Decimal64, Decimal128, Decoder, Described, Encoded,
    Float, Int, Key, List, Long, Map, Pairs, Raw, Retyped, Short, Sized, Symbol, Timestamp, UByte, UInt,
    ULong, UShort, UUID, decode, decode_at, decode_item,
)

__all__ = [
    "spec", "types", "Choices", "Composite", "DescribedBase", "Field", "Restricted", "show", "AMQP_HEADER",
    "FRAME_AMQP", "FRAME_SASL", "SASL_HEADER", "TLS_HEADER", "AMQPFrame", "EmptyFrame", "Frame", "FrameReader",
    "MalformedFrame", "ProtocolHeader", "RawFrame", "SASLFrame", "decode_body", "decode_frame", "describe",
    "encode", "frame", "transfer_frames", "Message", "encode_sections", "UNDESCRIBED", "Array", "Byte", "Char",
    "Counted", "Decimal32", "Decimal64", "Decimal128", "Decoder", "Described", "Encoded", "Float", "Int", "Key",
    "List", "Long", "Map", "Pairs", "Raw", "Retyped", "Short", "Sized", "Symbol", "Timestamp", "UByte", "UInt",
    "ULong", "UShort", "UUID", "decode", "decode_at", "decode_item",
]
