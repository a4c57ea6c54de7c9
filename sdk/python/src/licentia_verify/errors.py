"""Why a licence key or a verdict is refused, as the Go SDK names it."""

from __future__ import annotations


class VerificationError(Exception):
    """A licence key or verdict was refused. Match on ``code``, not on the message."""

    code = ""
    message = ""

    def __init__(self) -> None:
        super().__init__(self.message)


class LicenceKeyInvalid(VerificationError):
    """Not a key the service issues, an edited key, or one signed with a retired key."""

    code = "licence_key_invalid"
    message = "licence key invalid"


class LicenceWrongProduct(VerificationError):
    """The prefix belongs to one product and the signed payload to another."""

    code = "licence_wrong_product"
    message = "licence key belongs to another product"


class VerdictInvalid(VerificationError):
    """The verdict is malformed, edited, or not signed by a key of the product."""

    code = "verdict_invalid"
    message = "verdict invalid"


class VerdictMismatch(VerificationError):
    """The verdict is about another machine or licence."""

    code = "verdict_mismatch"
    message = "verdict is about another machine or licence"
