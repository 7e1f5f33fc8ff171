"""The encodings of the AMQP 1.0 primitive types, GENERATED from the types XML: do not edit.

Source: amqpspec/specdata/amqp-1.0/amqp-core-types-v1.0-os.xml, <encoding> elements.
Regenerate with: python -m amqpspec.wire.amqp10.gen
"""
# fmt: off
# ruff: noqa

# (type, name ('' when the XML gives none), code, category, width, label)
ENCODINGS: tuple[tuple[str, str, int, str, int, str], ...] = (
    ('null', '', 0x40, 'fixed', 0, 'the null value'),
    ('boolean', '', 0x56, 'fixed', 1, 'boolean with the octet 0x00 being false and octet 0x01 being true'),
    ('boolean', 'true', 0x41, 'fixed', 0, 'the boolean value true'),
    ('boolean', 'false', 0x42, 'fixed', 0, 'the boolean value false'),
    ('ubyte', '', 0x50, 'fixed', 1, '8-bit unsigned integer'),
    ('ushort', '', 0x60, 'fixed', 2, '16-bit unsigned integer in network byte order'),
    ('uint', '', 0x70, 'fixed', 4, '32-bit unsigned integer in network byte order'),
    ('uint', 'smalluint', 0x52, 'fixed', 1, 'unsigned integer value in the range 0 to 255 inclusive'),
    ('uint', 'uint0', 0x43, 'fixed', 0, 'the uint value 0'),
    ('ulong', '', 0x80, 'fixed', 8, '64-bit unsigned integer in network byte order'),
    ('ulong', 'smallulong', 0x53, 'fixed', 1, 'unsigned long value in the range 0 to 255 inclusive'),
    ('ulong', 'ulong0', 0x44, 'fixed', 0, 'the ulong value 0'),
    ('byte', '', 0x51, 'fixed', 1, "8-bit two's-complement integer"),
    ('short', '', 0x61, 'fixed', 2, "16-bit two's-complement integer in network byte order"),
    ('int', '', 0x71, 'fixed', 4, "32-bit two's-complement integer in network byte order"),
    ('int', 'smallint', 0x54, 'fixed', 1, "8-bit two's-complement integer"),
    ('long', '', 0x81, 'fixed', 8, "64-bit two's-complement integer in network byte order"),
    ('long', 'smalllong', 0x55, 'fixed', 1, "8-bit two's-complement integer"),
    ('float', 'ieee-754', 0x72, 'fixed', 4, 'IEEE 754-2008 binary32'),
    ('double', 'ieee-754', 0x82, 'fixed', 8, 'IEEE 754-2008 binary64'),
    ('decimal32', 'ieee-754', 0x74, 'fixed', 4, 'IEEE 754-2008 decimal32 using the Binary Integer Decimal encoding'),
    ('decimal64', 'ieee-754', 0x84, 'fixed', 8, 'IEEE 754-2008 decimal64 using the Binary Integer Decimal encoding'),
    ('decimal128', 'ieee-754', 0x94, 'fixed', 16, 'IEEE 754-2008 decimal128 using the Binary Integer Decimal encoding'),
    ('char', 'utf32', 0x73, 'fixed', 4, 'a UTF-32BE encoded Unicode character'),
    ('timestamp', 'ms64', 0x83, 'fixed', 8, "64-bit two's-complement integer representing milliseconds since the unix epoch"),
    ('uuid', '', 0x98, 'fixed', 16, 'UUID as defined in section 4.1.2 of RFC-4122'),
    ('binary', 'vbin8', 0xa0, 'variable', 1, 'up to 2^8 - 1 octets of binary data'),
    ('binary', 'vbin32', 0xb0, 'variable', 4, 'up to 2^32 - 1 octets of binary data'),
    ('string', 'str8-utf8', 0xa1, 'variable', 1, 'up to 2^8 - 1 octets worth of UTF-8 Unicode (with no byte order mark)'),
    ('string', 'str32-utf8', 0xb1, 'variable', 4, 'up to 2^32 - 1 octets worth of UTF-8 Unicode (with no byte order mark)'),
    ('symbol', 'sym8', 0xa3, 'variable', 1, 'up to 2^8 - 1 seven bit ASCII characters representing a symbolic value'),
    ('symbol', 'sym32', 0xb3, 'variable', 4, 'up to 2^32 - 1 seven bit ASCII characters representing a symbolic value'),
    ('list', 'list0', 0x45, 'fixed', 0, 'the empty list (i.e. the list with no elements)'),
    ('list', 'list8', 0xc0, 'compound', 1, 'up to 2^8 - 1 list elements with total size less than 2^8 octets'),
    ('list', 'list32', 0xd0, 'compound', 4, 'up to 2^32 - 1 list elements with total size less than 2^32 octets'),
    ('map', 'map8', 0xc1, 'compound', 1, 'up to 2^8 - 1 octets of encoded map data'),
    ('map', 'map32', 0xd1, 'compound', 4, 'up to 2^32 - 1 octets of encoded map data'),
    ('array', 'array8', 0xe0, 'array', 1, 'up to 2^8 - 1 array elements with total size less than 2^8 octets'),
    ('array', 'array32', 0xf0, 'array', 4, 'up to 2^32 - 1 array elements with total size less than 2^32 octets'),
)

# primitive type -> section number of its definition
PRIMITIVE_TYPES: dict[str, str] = {
    'null': '1.6.1',
    'boolean': '1.6.2',
    'ubyte': '1.6.3',
    'ushort': '1.6.4',
    'uint': '1.6.5',
    'ulong': '1.6.6',
    'byte': '1.6.7',
    'short': '1.6.8',
    'int': '1.6.9',
    'long': '1.6.10',
    'float': '1.6.11',
    'double': '1.6.12',
    'decimal32': '1.6.13',
    'decimal64': '1.6.14',
    'decimal128': '1.6.15',
    'char': '1.6.16',
    'timestamp': '1.6.17',
    'uuid': '1.6.18',
    'binary': '1.6.19',
    'string': '1.6.20',
    'symbol': '1.6.21',
    'list': '1.6.22',
    'map': '1.6.23',
    'array': '1.6.24',
}
