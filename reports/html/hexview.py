"""Hex views of captured octets, bounded so that a flooding broker cannot make a page huge."""
from __future__ import annotations

from dataclasses import dataclass

#: octets shown per transcript entry; the rest is in the pcap and the result file
MAX_OCTETS = 1024


@dataclass
class HexView:
    lines: list[str]        # "0000  01 00 00 00 00 00 05 00 0a  00 0a ...  |..........|"
    total: int              # octets the entry holds
    shown: int              # octets in ``lines``
    error: str | None = None

    @property
    def cut(self) -> int:
        return self.total - self.shown


# octet -> itself when printable ASCII, else "." (bytes.translate: fast on long transcripts)
_ASCII = bytes(b if 0x20 <= b < 0x7F else 0x2E for b in range(256))


def hex_view(hex_text: object, max_octets: int = MAX_OCTETS) -> HexView:
    """Offset, 16 octets in hex (two groups of 8) and their ASCII, one line per 16 octets.

    The input comes from a file: anything that is not an even run of hex digits is reported,
    not decoded by guesswork.
    """
    if not isinstance(hex_text, str) or not hex_text:
        return HexView([], 0, 0)
    text = "".join(hex_text.split())
    try:
        data = bytes.fromhex(text[: max_octets * 2])
    except ValueError:
        return HexView([], len(text) // 2, 0, error="not hexadecimal")
    total = len(text) // 2
    lines = []
    for offset in range(0, len(data), 16):
        chunk = data[offset:offset + 16]
        hexes = f"{chunk[:8].hex(' '):<23}  {chunk[8:].hex(' '):<23}"
        lines.append(f"{offset:04x}  {hexes}  |{chunk.translate(_ASCII).decode('ascii')}|")
    return HexView(lines, total, len(data))
