"""Offline verification of licence keys against a set of products."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field, replace
from typing import Any, Dict, List, Mapping, Optional, Sequence

from ._crypto import PublicKey
from ._text import trim_space
from .errors import LicenceKeyInvalid, LicenceWrongProduct
from .licencekey import (
    DEFAULT_LICENCE_DOMAIN,
    LicenceKey,
    format_uuid,
    is_key_prefix,
    licence_key_message,
    parse_licence_key,
    product_tag,
    upper_prefix,
)

_HEX_KEY = re.compile(r"[0-9a-fA-F]{64}\Z")


@dataclass(frozen=True)
class Product:
    """What offline verification needs to know of a product.

    Its id, key prefix, signing domains (empty for the defaults) and the
    public keys it accepts: the current one and previous ones not retired,
    each 32 bytes (see parse_public_key).
    """

    id: str
    key_prefix: str
    public_keys: Sequence[bytes] = ()
    licence_domain: str = ""
    verdict_domain: str = ""


def parse_public_key(s: str) -> bytes:
    """Read a public key in 64 hexadecimal characters."""
    h = trim_space(s)
    if not _HEX_KEY.match(h):
        raise ValueError("public key must be 64 hexadecimal characters")
    return bytes.fromhex(h)


def product_from_json(o: Mapping[str, Any]) -> Product:
    """Read a product as the administration API shows it, or as the vector files write it.

    The API's product has public_key and previous_public_keys; the vector
    files have public_keys.
    """

    def text(k: str) -> str:
        v = o.get(k)
        return v if isinstance(v, str) else ""

    def texts(k: str) -> List[str]:
        v = o.get(k)
        return [str(x) for x in v] if isinstance(v, list) else []

    keys = ([text("public_key")] if text("public_key") else []) + texts("previous_public_keys") + texts("public_keys")
    return Product(
        id=text("id"),
        key_prefix=text("key_prefix"),
        public_keys=tuple(parse_public_key(k) for k in keys),
        licence_domain=text("licence_signing_domain"),
        verdict_domain=text("verdict_signing_domain"),
    )


def fingerprint(public_key: bytes) -> str:
    """Name a public key, as a verdict's key_fingerprint: the first 8 bytes of its SHA-256, in hex."""
    return hashlib.sha256(public_key).digest()[:8].hex()


@dataclass(frozen=True)
class VerifiedKey:
    """A licence key whose signature checked."""

    product_id: str
    #: The licence's UUID, lower case.
    licence_id: str
    #: The key that signed it: the current key or a previous one not yet retired.
    public_key: bytes


@dataclass
class _Known:
    product: Product
    keys: List[PublicKey] = field(default_factory=list)


class Verifier:
    """Checks licence keys offline against a set of products; build it once."""

    def __init__(self, *products: Product) -> None:
        """Prefixes are matched case insensitively; a bad or repeated prefix raises ValueError."""
        self._by_prefix: Dict[str, _Known] = {}
        self._by_tag: Dict[bytes, _Known] = {}
        for p in products:
            prefix = upper_prefix(p.key_prefix) or ""
            if not is_key_prefix(prefix):
                raise ValueError(f"product {p.id!r}: bad key prefix {p.key_prefix!r}")
            if prefix in self._by_prefix:
                raise ValueError(f"product {p.id!r}: key prefix {prefix!r} used twice")
            known = _Known(replace(p, key_prefix=prefix), [PublicKey(k) for k in p.public_keys])
            self._by_prefix[prefix] = known
            self._by_tag[product_tag(p.id)] = known

    def verify_licence_key(self, s: str) -> VerifiedKey:
        """Check s.

        Raises LicenceKeyInvalid for anything not issued for a known product
        under a key it accepts (any edit included), and LicenceWrongProduct
        when the prefix names one product and a valid payload another.
        """
        k = parse_licence_key(s)
        p = self._by_prefix.get(k.prefix)
        if p is None:
            raise LicenceKeyInvalid()
        pub = _signer(k, p)
        if pub is not None:
            return VerifiedKey(p.product.id, format_uuid(k.licence_id), pub.raw)
        other = self._by_tag.get(k.product_tag)
        if other is not None and other.product.id != p.product.id and _signer(k, other) is not None:
            raise LicenceWrongProduct()
        raise LicenceKeyInvalid()


def verify_licence_key(s: str, *products: Product) -> VerifiedKey:
    """Check s against products; see Verifier.verify_licence_key."""
    return Verifier(*products).verify_licence_key(s)


def _signer(k: LicenceKey, p: _Known) -> Optional[PublicKey]:
    if k.product_tag != product_tag(p.product.id):
        return None
    msg = licence_key_message(p.product.licence_domain or DEFAULT_LICENCE_DOMAIN, p.product.id, k.version, k.licence_id)
    for pub in p.keys:
        if pub.verifies(msg, k.signature):
            return pub
    return None
