"""Ed25519 (RFC 8032) through the cryptography package."""

from __future__ import annotations

from typing import Optional

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey


class PublicKey:
    """A raw 32-byte public key, loaded once. Bytes that are not a key verify nothing, as in Go."""

    def __init__(self, raw: bytes) -> None:
        self.raw = bytes(raw)
        self._key: Optional[Ed25519PublicKey] = None
        if len(self.raw) == 32:
            try:
                self._key = Ed25519PublicKey.from_public_bytes(self.raw)
            except ValueError:
                self._key = None

    def verifies(self, msg: bytes, sig: bytes) -> bool:
        """Report whether sig is this key's signature of msg."""
        if self._key is None or len(sig) != 64:
            return False
        try:
            self._key.verify(sig, msg)
        except (InvalidSignature, ValueError):
            return False
        return True
