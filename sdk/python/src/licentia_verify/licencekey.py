"""The licence-key format, version 1 (docs/licence-key-format.md).

Layout::

    PREFIX "_" base32( version[1] | product_tag[8] | licence_id[16] | signature[64] )
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from typing import Optional

from ._text import trim_space, utf8
from .errors import LicenceKeyInvalid

#: The licence-key format version this package reads. Keys already sold keep
#: verifying forever: a new format takes a new version, and version 1 stays
#: readable.
LICENCE_KEY_FORMAT = 1

#: The licence signing domain of a product that set none.
DEFAULT_LICENCE_DOMAIN = "licentia/licence-key/v1"

_PRODUCT_TAG_LEN = 8
_LICENCE_ID_LEN = 16
_PAYLOAD_LEN = 1 + _PRODUCT_TAG_LEN + _LICENCE_ID_LEN
_KEY_BYTES_LEN = _PAYLOAD_LEN + 64

# Crockford's base32 alphabet: digits and upper-case letters without I, L, O
# and U, so no two characters look alike. Input is read case insensitively;
# no other character is mapped, so every edit of a key is detected.
_ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
_DECODE = {c: i for i, c in enumerate(_ALPHABET)}
_DECODE.update({c.lower(): i for i, c in enumerate(_ALPHABET)})

_PREFIX = re.compile(r"[A-Z][A-Z2-9]{1,7}\Z")


@dataclass(frozen=True)
class LicenceKey:
    """A parsed, not yet verified, licence key."""

    prefix: str
    version: int
    product_tag: bytes
    licence_id: bytes
    signature: bytes


def _encoded_len(n: int) -> int:
    return (n * 8 + 4) // 5


def _decode(s: str, n: int) -> Optional[bytes]:
    """Read exactly n bytes, most significant bits first.

    None for a wrong length, a character outside the alphabet, or padding
    bits that are not zero, so each byte string has exactly one encoding.
    """
    if len(s) != _encoded_len(n):
        return None
    out = bytearray()
    acc = 0
    bits = 0
    for c in s:
        v = _DECODE.get(c)
        if v is None:
            return None
        acc = ((acc << 5) | v) & 0xFFFF
        bits += 5
        if bits >= 8:
            bits -= 8
            if len(out) < n:
                out.append((acc >> bits) & 0xFF)
    if acc & ((1 << bits) - 1):
        return None
    return bytes(out) if len(out) == n else None


def upper_prefix(p: str) -> Optional[str]:
    """Upper-case a prefix as Go's strings.ToUpper does.

    Only a-z and the two non-ASCII letters whose upper case is ASCII (dotless
    i and long s) can end up in a prefix; any other non-ASCII character
    cannot: None.
    """
    out = []
    for c in p:
        if c < "\x80":
            out.append(c.upper())
        elif c == "\u0131":
            out.append("I")
        elif c == "\u017f":
            out.append("S")
        else:
            return None
    return "".join(out)


def is_key_prefix(p: str) -> bool:
    """Report whether p is a key prefix: 2 to 8 of A-Z and 2-9, first a letter."""
    return _PREFIX.match(p) is not None


def parse_licence_key(s: str) -> LicenceKey:
    """Read the shape of a key; raise LicenceKeyInvalid for anything else.

    Surrounding white space is ignored, letters may be of either case and
    dashes may group the body anywhere. Nothing a signature proves is
    checked; that is Verifier.verify_licence_key.
    """
    s = trim_space(s)
    prefix, sep, body = s.partition("_")
    if not sep or len(utf8(s)) > 512:
        raise LicenceKeyInvalid()
    upper = upper_prefix(prefix)
    if upper is None or not is_key_prefix(upper):
        raise LicenceKeyInvalid()
    b = _decode(body.replace("-", ""), _KEY_BYTES_LEN)
    if b is None or b[0] != LICENCE_KEY_FORMAT:
        raise LicenceKeyInvalid()
    return LicenceKey(
        prefix=upper,
        version=b[0],
        product_tag=b[1 : 1 + _PRODUCT_TAG_LEN],
        licence_id=b[1 + _PRODUCT_TAG_LEN : _PAYLOAD_LEN],
        signature=b[_PAYLOAD_LEN:],
    )


def product_tag(product_id: str) -> bytes:
    """The first 8 bytes of SHA-256 of the product id: the product in a key's payload."""
    return hashlib.sha256(utf8(product_id)).digest()[:_PRODUCT_TAG_LEN]


def format_uuid(b: bytes) -> str:
    """Write 16 bytes as a lower-case UUID."""
    h = b.hex()
    return f"{h[0:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


def licence_key_message(domain: str, product_id: str, version: int, licence_id: bytes) -> bytes:
    """What a licence-key signature covers.

    ``domain 0x00 "licence-key" 0x00 version product_id 0x00 licence_id[16]``.
    The full product id is signed (the payload carries only its tag), and the
    prefix is not: a valid payload behind another product's prefix is
    recognised as belonging to that other product.
    """
    return utf8(domain) + b"\x00licence-key\x00" + bytes([version]) + utf8(product_id) + b"\x00" + licence_id
