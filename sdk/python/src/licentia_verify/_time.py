"""RFC 3339 times as Go's time.Parse(time.RFC3339Nano) reads them."""

from __future__ import annotations

import re
from datetime import datetime, timezone
from typing import Optional

# Go's layout also takes a one-digit hour, a fraction after a comma and of
# any length, and an offset up to 24:60.
_RFC3339 = re.compile(
    r"(\d{4})-(\d{2})-(\d{2})T(\d{1,2}):(\d{2}):(\d{2})(?:[.,](\d+))?(?:(Z)|([+-])(\d{2}):(\d{2}))\Z", re.ASCII
)


def parse_time(s: str) -> Optional[int]:
    """Read an RFC 3339 time as microseconds since 1970 (UTC); None where Go's parser fails.

    Counted by hand rather than with datetime, which has no year 0.
    """
    m = _RFC3339.match(s)
    if m is None:
        return None
    year, month, day, hour, minute, second = (int(x) for x in m.group(1, 2, 3, 4, 5, 6))
    micro = int((m.group(7) or "").ljust(6, "0")[:6])
    if not 1 <= month <= 12 or not 1 <= day <= _days_in(year, month) or hour > 23 or minute > 59 or second > 59:
        return None
    offset = 0
    if m.group(8) is None:
        oh, om = int(m.group(10)), int(m.group(11))
        if oh > 24 or om > 60:
            return None
        offset = (-1 if m.group(9) == "-" else 1) * (oh * 60 + om)
    seconds = _days_from_civil(year, month, day) * 86400 + hour * 3600 + (minute - offset) * 60 + second
    return seconds * 1_000_000 + micro


def micros(t: datetime) -> int:
    """A datetime as microseconds since 1970; a naive one is taken as UTC."""
    if t.tzinfo is None:
        t = t.replace(tzinfo=timezone.utc)
    d = t - datetime(1970, 1, 1, tzinfo=timezone.utc)
    return (d.days * 86400 + d.seconds) * 1_000_000 + d.microseconds


def _days_in(year: int, month: int) -> int:
    if month == 2:
        return 29 if year % 4 == 0 and (year % 100 != 0 or year % 400 == 0) else 28
    return 30 if month in (4, 6, 9, 11) else 31


def _days_from_civil(y: int, m: int, d: int) -> int:
    # Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's algorithm).
    y -= m <= 2
    era = y // 400
    yoe = y - era * 400
    doy = (153 * (m + (-3 if m > 2 else 9)) + 2) // 5 + d - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return era * 146097 + doe - 719468
