"""Judging a verified verdict as the Go SDK's Client does (docs/sdk.md)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Optional

from ._time import micros, parse_time
from .errors import VerdictInvalid, VerdictMismatch
from .payload import Verdict
from .verdict import verify_verdict
from .verifier import Product

#: Reasons a verdict by itself does not let the application run, as the Go
#: SDK's Status.Reason names them.
REVOKED = "revoked"
EXPIRED = "expired"
NEWER_MAJOR = "newer_major"
SEAT_FREED = "seat_freed"


@dataclass
class Judgement:
    """What a verdict says about running the application now."""

    #: Whether the application may run.
    valid: bool
    #: Why not: revoked, expired, newer_major or seat_freed; None when valid.
    reason: Optional[str]
    verdict: Verdict
    #: Whether the verdict names a live seat of this machine.
    seated: bool
    #: True when valid_until has passed. A stale verdict is still the last
    #: word: it never refuses by itself.
    stale: bool


def check_verdict(
    s: str,
    product: Product,
    *,
    machine_id: str,
    licence_id: str,
    now: Optional[datetime] = None,
    major: int = 0,
    require_seat: bool = False,
) -> Judgement:
    """Verify a verdict, check it is about this machine and licence, and judge it at now.

    Judged as the Go SDK's Client judges: revoked, expired (by state or by
    its signed expires_at), newer_major when major is newer than the
    verdict's, and seat_freed when require_seat is set and the verdict names
    no live seat. now defaults to the system clock; a naive datetime is
    taken as UTC. Raises VerdictInvalid as verify_verdict does, or when
    issued_at is not a time, and VerdictMismatch for another machine or
    licence.
    """
    v = verify_verdict(s, product)
    if v.machine_id != machine_id or v.licence_id != licence_id:
        raise VerdictMismatch()
    if parse_time(v.issued_at) is None:
        raise VerdictInvalid()
    at = micros(now if now is not None else datetime.now(timezone.utc))
    until = parse_time(v.valid_until)
    reason = _reason(v, at, major, require_seat)
    return Judgement(
        valid=reason is None,
        reason=reason,
        verdict=v,
        seated=v.activation_id is not None,
        stale=until is None or at > until,
    )


def _reason(v: Verdict, at: int, major: int, require_seat: bool) -> Optional[str]:
    if v.state == REVOKED:
        return REVOKED
    if v.state == EXPIRED:
        return EXPIRED
    # The licence's own expiry is signed, so it is judged offline.
    exp = parse_time(v.expires_at) if v.expires_at is not None else None
    if exp is not None and at >= exp:
        return EXPIRED
    if major > v.major:
        return NEWER_MAJOR
    if require_seat and v.activation_id is None:
        return SEAT_FREED
    return None
