"""A verdict's payload, read as the Go SDK's encoding/json reads it.

Both must accept the same signed bytes and see the same values, which the
json module does not give: it recurses (deep nesting that Go reads fails
here), reads 3.0 as a number where Go refuses it for an integer field,
and decodes invalid UTF-8 differently. Go's rules, which this module
follows:

- the text is strict JSON (RFC 8259), checked whole before any field;
- names match fields case insensitively (with Unicode's simple folding:
  "ſ" is "s" and the Kelvin sign "K" is "k"); the last match wins;
- an integer field takes only an integer literal within 64 bits, a string
  field only a string; any other type makes the whole payload invalid;
  null empties a nullable field and leaves any other as it is;
- in strings, each byte of invalid UTF-8 and each unpaired surrogate
  escape reads as U+FFFD;
- a top-level null reads as an empty payload; any other non-object is
  invalid;
- features is an array of objects {code, expires_at} or null; each element
  is read into the element the same place of an earlier features array of
  this payload, when there was one, as Go reuses a slice's elements: a
  name an element leaves out keeps the earlier value, and a null element
  keeps the earlier element whole. null and [] start afresh.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from typing import Any, Dict, List, Optional, Tuple

from ._time import micros, parse_time


@dataclass
class VerdictFeature:
    """A feature granted until expires_at, or for as long as the licence when None."""

    code: str = ""
    expires_at: Optional[str] = None


@dataclass
class Verdict:
    """The payload of a verdict (docs/verdict-format.md), with the format's field names."""

    format: int = 0
    licence_id: str = ""
    product_id: str = ""
    machine_id: str = ""
    #: This machine's live activation, or None when it holds no live seat.
    activation_id: Optional[str] = None
    #: The licence's derived state: active, trial, expired, revoked.
    state: str = ""
    expires_at: Optional[str] = None
    trial_ends_at: Optional[str] = None
    #: The major application version the licence is for.
    major: int = 0
    limit_kind: str = ""
    limit_count: int = 0
    issued_at: str = ""
    valid_until: str = ""
    #: The fingerprint of the public key that signed the verdict.
    key_fingerprint: str = ""
    #: The licence's grants in force when the verdict was signed, ordered by
    #: code; empty when there are none.
    features: List[VerdictFeature] = field(default_factory=list)

    def to_json(self) -> Dict[str, Any]:
        """The payload as a dict, in the format's field order; features only
        when there are some, as the Go SDK writes it."""
        d = dict(self.__dict__)
        del d["features"]
        if self.features:
            d["features"] = [dict(f.__dict__) for f in self.features]
        return d

    def feature(self, code: str, now: Optional[datetime] = None) -> bool:
        """Whether the verdict grants code at now, as the Go SDK's Verdict.Feature.

        Granted, and its expires_at, if any, after now. now defaults to the
        system clock; a naive datetime is taken as UTC. It judges only the
        grant: check_verdict says whether the application may run at all.
        """
        for f in self.features:
            if f.code != code:
                continue
            if f.expires_at is None:
                return True
            exp = parse_time(f.expires_at)
            return exp is not None and micros(now if now is not None else datetime.now(timezone.utc)) < exp
        return False


_FIELDS = {
    "format": "int",
    "licence_id": "string",
    "product_id": "string",
    "machine_id": "string",
    "activation_id": "nullable",
    "state": "string",
    "expires_at": "nullable",
    "trial_ends_at": "nullable",
    "major": "int",
    "limit_kind": "string",
    "limit_count": "int",
    "issued_at": "string",
    "valid_until": "string",
    "key_fingerprint": "string",
    "features": "features",
}

_INT = re.compile(rb"-?(0|[1-9][0-9]*)\Z")
_WS = b" \t\n\r"
_ESCAPES = {0x22: '"', 0x5C: "\\", 0x2F: "/", 0x62: "\b", 0x66: "\f", 0x6E: "\n", 0x72: "\r", 0x74: "\t"}

# Values are (kind, content): kind is "string", "number", "bool", "null",
# "array", "object" or "container"; content is the string, a number's
# literal, an array's values or an object's (name, value) members. Arrays
# and objects keep their content only as deep as a field can take it
# (features: an array of objects of strings); deeper ones are checked and
# dropped as "container".
_Value = Tuple[str, Any]

# How many levels of arrays and objects the reader keeps: the payload,
# features, a feature.
_KEPT_DEPTH = 3


class _Syntax(Exception):
    pass


def decode_payload(b: bytes) -> Optional[Verdict]:
    """Read payload bytes, or None where Go's json.Unmarshal fails."""
    try:
        kind, top = _Reader(b).document()
    except _Syntax:
        return None
    out = Verdict()
    if kind != "object":
        return out if kind == "null" else None
    features = _Features()
    for name, (kind, text) in top:
        field = _fold(name)
        want = _FIELDS.get(field)
        if want is None:
            continue
        if want == "features":
            if not features.read(kind, text):
                return None
            continue
        if kind == "null":
            if want == "nullable":
                setattr(out, field, None)
            continue
        if want == "int":
            if kind != "number" or not _INT.match(text):
                return None
            n = int(text)
            if not -(2**63) <= n < 2**63:
                return None
            setattr(out, field, n)
        else:
            if kind != "string":
                return None
            setattr(out, field, text)
    out.features = features.list()
    return out


class _Features:
    """features members read as Go reads them into a slice field: elements
    are decoded into the slice's backing array, which a later features
    array of the same payload reuses (its elements keep what the new ones
    leave out); null drops the slice and [] makes an empty one."""

    def __init__(self) -> None:
        self.backing: List[VerdictFeature] = []
        self.len = 0

    def read(self, kind: str, items: Any) -> bool:
        """Take one features member; False where Go fails."""
        if kind == "null" or (kind == "array" and not items):
            self.backing, self.len = [], 0
            return True
        if kind != "array":
            return False
        while len(self.backing) < len(items):
            self.backing.append(VerdictFeature())
        self.len = len(items)
        return all(item[0] == "null" or _read_feature(item, f) for item, f in zip(items, self.backing))

    def list(self) -> List[VerdictFeature]:
        return [replace(f) for f in self.backing[: self.len]]


def _read_feature(item: _Value, f: VerdictFeature) -> bool:
    """Read one element into f; False where Go fails."""
    kind, members = item
    if kind != "object":
        return False
    for name, (mkind, text) in members:
        field = _fold(name)
        if field not in ("code", "expires_at"):
            continue
        if mkind == "null":
            if field == "expires_at":
                f.expires_at = None
            continue
        if mkind != "string":
            return False
        setattr(f, field, text)
    return True


def _fold(s: str) -> str:
    # The fields' names are ASCII, and the only non-ASCII letters that fold
    # to ASCII letters are long s and the Kelvin sign.
    return "".join("s" if c == "\u017f" else "k" if c == "\u212a" else c.lower() if c < "\x80" else c for c in s)


class _Reader:
    def __init__(self, b: bytes) -> None:
        self.b = b
        self.i = 0

    def document(self) -> _Value:
        """The top-level value, with arrays and objects kept _KEPT_DEPTH levels deep."""
        self.ws()
        top = self.value(_KEPT_DEPTH)
        self.ws()
        if self.i != len(self.b):
            raise _Syntax()
        return top

    def object(self, keep: int) -> _Value:
        members: List[Tuple[str, _Value]] = []
        self.i += 1
        self.ws()
        if self.peek() == 0x7D:
            self.i += 1
            return ("object", members)
        while True:
            self.ws()
            name = self.string()
            self.ws()
            self.expect(0x3A)
            self.ws()
            members.append((name, self.value(keep)))
            self.ws()
            c = self.next()
            if c == 0x7D:
                return ("object", members)
            if c != 0x2C:
                raise _Syntax()

    def array(self, keep: int) -> _Value:
        items: List[_Value] = []
        self.i += 1
        self.ws()
        if self.peek() == 0x5D:
            self.i += 1
            return ("array", items)
        while True:
            self.ws()
            items.append(self.value(keep))
            self.ws()
            c = self.next()
            if c == 0x5D:
                return ("array", items)
            if c != 0x2C:
                raise _Syntax()

    def value(self, keep: int) -> _Value:
        """One value; an object or array keeps its content while keep is above
        0, and is only checked past it (no field takes it), so the recursion
        is at most _KEPT_DEPTH deep."""
        c = self.peek()
        if c == 0x22:
            return ("string", self.string())
        if keep > 0 and c == 0x7B:
            return self.object(keep - 1)
        if keep > 0 and c == 0x5B:
            return self.array(keep - 1)
        if c in (0x7B, 0x5B):
            self.container()
            return ("container", None)
        if c == 0x74:
            return self.literal(b"true", ("bool", None))
        if c == 0x66:
            return self.literal(b"false", ("bool", None))
        if c == 0x6E:
            return self.literal(b"null", ("null", None))
        return ("number", self.number())

    def container(self) -> None:
        """Check nested objects and arrays with a stack rather than recursion."""
        stack: List[int] = []
        while True:
            # At a value.
            self.ws()
            c = self.peek()
            if c in (0x7B, 0x5B):
                self.i += 1
                stack.append(c)
                self.ws()
                if self.peek() == (0x7D if c == 0x7B else 0x5D):
                    self.i += 1
                    stack.pop()
                else:
                    if c == 0x7B:
                        self.member_name()
                    continue
            elif c == 0x22:
                self.string()
            elif c == 0x74:
                self.literal(b"true", None)
            elif c == 0x66:
                self.literal(b"false", None)
            elif c == 0x6E:
                self.literal(b"null", None)
            else:
                self.number()
            # After a value: close what ends here, or go on to the next.
            while stack:
                top = stack[-1]
                self.ws()
                d = self.next()
                if d == 0x2C:
                    if top == 0x7B:
                        self.member_name()
                    break
                if d != (0x7D if top == 0x7B else 0x5D):
                    raise _Syntax()
                stack.pop()
            if not stack:
                return

    def member_name(self) -> None:
        self.ws()
        self.string()
        self.ws()
        self.expect(0x3A)

    def literal(self, word: bytes, v: Any) -> Any:
        if self.b[self.i : self.i + len(word)] != word:
            raise _Syntax()
        self.i += len(word)
        return v

    def number(self) -> bytes:
        start = self.i
        if self.peek() == 0x2D:
            self.i += 1
        if self.peek() == 0x30:
            self.i += 1
        elif self.digits() == 0:
            raise _Syntax()
        if self.peek() == 0x2E:
            self.i += 1
            if self.digits() == 0:
                raise _Syntax()
        if self.peek() in (0x65, 0x45):
            self.i += 1
            if self.peek() in (0x2B, 0x2D):
                self.i += 1
            if self.digits() == 0:
                raise _Syntax()
        return self.b[start : self.i]

    def digits(self) -> int:
        start = self.i
        while 0x30 <= self.peek() <= 0x39:
            self.i += 1
        return self.i - start

    def string(self) -> str:
        self.expect(0x22)
        out: List[str] = []
        while True:
            c = self.next()
            if c == 0x22:
                return "".join(out)
            if c < 0x20:
                raise _Syntax()
            if c == 0x5C:
                out.append(self.escape())
            elif c < 0x80:
                out.append(chr(c))
            else:
                self.i -= 1
                out.append(self.rune())

    def escape(self) -> str:
        c = self.next()
        if c != 0x75:
            if c not in _ESCAPES:
                raise _Syntax()
            return _ESCAPES[c]
        r = self.hex4()
        if not 0xD800 <= r <= 0xDFFF:
            return chr(r)
        # A high surrogate followed by an escaped low one is a pair; anything
        # else is U+FFFD, and what follows is read on its own.
        if r <= 0xDBFF and self.b[self.i : self.i + 2] == b"\\u":
            save = self.i
            self.i += 2
            lo = self.hex4()
            if 0xDC00 <= lo <= 0xDFFF:
                return chr(0x10000 + ((r - 0xD800) << 10) + (lo - 0xDC00))
            self.i = save
        return "\ufffd"

    def hex4(self) -> int:
        h = self.b[self.i : self.i + 4]
        if len(h) != 4 or any(x not in b"0123456789abcdefABCDEF" for x in h):
            raise _Syntax()
        self.i += 4
        return int(h, 16)

    def rune(self) -> str:
        """One UTF-8 sequence as Go's utf8.DecodeRune: an invalid byte is U+FFFD and only it is consumed."""
        b, i = self.b, self.i
        c0 = b[i]
        n, lo, hi = 0, 0x80, 0xBF
        if 0xC2 <= c0 <= 0xDF:
            n = 2
        elif 0xE0 <= c0 <= 0xEF:
            n = 3
            lo = 0xA0 if c0 == 0xE0 else 0x80
            hi = 0x9F if c0 == 0xED else 0xBF
        elif 0xF0 <= c0 <= 0xF4:
            n = 4
            lo = 0x90 if c0 == 0xF0 else 0x80
            hi = 0x8F if c0 == 0xF4 else 0xBF
        seq = b[i : i + n]
        if n == 0 or len(seq) < n or not lo <= seq[1] <= hi or any(not 0x80 <= x <= 0xBF for x in seq[2:]):
            self.i += 1
            return "\ufffd"
        self.i += n
        return seq.decode("utf-8")

    def ws(self) -> None:
        while self.i < len(self.b) and self.b[self.i] in _WS:
            self.i += 1

    def peek(self) -> int:
        return self.b[self.i] if self.i < len(self.b) else -1

    def next(self) -> int:
        if self.i >= len(self.b):
            raise _Syntax()
        c = self.b[self.i]
        self.i += 1
        return c

    def expect(self, c: int) -> None:
        if self.next() != c:
            raise _Syntax()
