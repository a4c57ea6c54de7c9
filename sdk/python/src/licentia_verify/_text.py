"""Strings as the Go SDK reads them.

Go works on UTF-8 bytes, so lengths are counted in bytes, and white space is
Unicode's White_Space, which is not quite what str.strip removes (it also
removes U+001C to U+001F).
"""

from __future__ import annotations

import re

_WHITE_SPACE = (
    "\t\n\v\f\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006"
    "\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000"
)
_SURROGATE = re.compile("[\ud800-\udfff]")


def trim_space(s: str) -> str:
    """Remove leading and trailing white space, as Go's strings.TrimSpace."""
    return s.strip(_WHITE_SPACE)


def utf8(s: str) -> bytes:
    """Encode s; a lone surrogate becomes U+FFFD, as in Go."""
    return _SURROGATE.sub("\ufffd", s).encode("utf-8")
