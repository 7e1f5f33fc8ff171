"""A fake AMQP 0-9-1 broker whose every string is hostile, to prove no broker text can stop a
run or lose a result (issue 11 items 2 and 6).

It completes the handshake and opens channels like a broker, then refuses every other method
with a channel.close (or, on channel 0, a connection.close) whose reply-text holds an octet
that is not UTF-8, a NUL, an ESC sequence that would retitle a terminal, a CR/LF with a fake
summary line and the Unicode line separators that ``str.splitlines`` splits on. Its product
and version in connection.start carry the same text. Frames are built with the suite's own
codec; the surrogateescape'd ``\\udcff`` in a str encodes to the raw octet 0xFF.
"""
from __future__ import annotations

from amqpspec.wire.amqp091 import MethodFrame, spec

from .fake091 import broker, refusing

# the octet 0xFF (invalid anywhere in UTF-8), NUL, an OSC title change, CR/LF with a fake
# summary, NEL, LINE SEPARATOR and PARAGRAPH SEPARATOR
HOSTILE_TEXT = ("bad \udcff octet \x00 nul \x1b]0;pwned\x07 title\r\n all cases passed \x85 nel"
                " \u2028 ls \u2029 ps")

PROPERTIES = {"product": "Hostile" + HOSTILE_TEXT, "version": "6.6\x1b[2J" + HOSTILE_TEXT,
              "capabilities": {"publisher_confirms": True, "basic.nack": True}}

#: serves the handshake and refuses all else (and a frame that does not decode) with HOSTILE_TEXT
hostile_text_broker = broker(PROPERTIES, refusing(channel_code=406, connection_code=503, text=HOSTILE_TEXT),
                             on_frame_error=MethodFrame(0, spec.ConnectionClose(501, HOSTILE_TEXT, 0, 0)).encode())
