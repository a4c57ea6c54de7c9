"""The verdict format, version 1 (docs/verdict-format.md)."""

from __future__ import annotations

import binascii
import re
from typing import Optional

from ._crypto import PublicKey
from ._text import trim_space, utf8
from .errors import VerdictInvalid
from .payload import Verdict, decode_payload
from .verifier import Product

#: The verdict format version this package reads.
VERDICT_FORMAT = 1

#: The verdict signing domain of a product that set none.
DEFAULT_VERDICT_DOMAIN = "licentia/verdict/v1"

_BASE64URL = re.compile(r"[A-Za-z0-9_-]*\Z")


def verdict_message(domain: str, payload: bytes) -> bytes:
    """What a verdict signature covers: ``domain 0x00 "verdict" 0x00 payload``.

    The payload is the exact JSON bytes carried in the verdict, so no
    canonical JSON is needed.
    """
    return utf8(domain) + b"\x00verdict\x00" + payload


def _decode_strict(s: str) -> Optional[bytes]:
    # As Go's base64.RawURLEncoding.Strict(): unused trailing bits must be
    # zero and "=" is refused, but carriage returns and line feeds are
    # skipped wherever they are.
    s = s.replace("\r", "").replace("\n", "")
    if not _BASE64URL.match(s) or len(s) % 4 == 1:
        return None
    try:
        b = binascii.a2b_base64(s.replace("-", "+").replace("_", "/") + "=" * (-len(s) % 4))
    except binascii.Error:
        return None
    # Re-encoding gives s back only when the unused bits were zero.
    if binascii.b2a_base64(b, newline=False).decode().rstrip("=").replace("+", "-").replace("/", "_") != s:
        return None
    return b


def verify_verdict(s: str, product: Product) -> Verdict:
    """Check a verdict's signature against the product's keys and return its payload.

    The encoding is ``"v1." base64url(payload) "." base64url(signature)``.
    Raises VerdictInvalid for a verdict that is malformed, edited, not
    signed by a key of the product, or about another product. The content
    is not judged; check_verdict does that.
    """
    s = trim_space(s)
    if len(utf8(s)) > 16384:
        raise VerdictInvalid()
    parts = s.split(".")
    if len(parts) != 3 or parts[0] != "v1":
        raise VerdictInvalid()
    payload, sig = _decode_strict(parts[1]), _decode_strict(parts[2])
    if payload is None or sig is None or len(sig) != 64:
        raise VerdictInvalid()
    msg = verdict_message(product.verdict_domain or DEFAULT_VERDICT_DOMAIN, payload)
    if not any(PublicKey(k).verifies(msg, sig) for k in product.public_keys):
        raise VerdictInvalid()
    v = decode_payload(payload)
    if v is None or v.format != VERDICT_FORMAT or v.product_id != product.id:
        raise VerdictInvalid()
    return v
