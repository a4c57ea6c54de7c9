// Strings as the Go SDK reads them: Go works on UTF-8 bytes, so lengths are
// counted in bytes and whitespace is Unicode's White_Space, which is not
// quite what String.prototype.trim removes (it keeps U+0085 and removes
// U+FEFF).

const whiteSpace = new Set([
  0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x20, 0x85, 0xa0, 0x1680, 0x2000, 0x2001, 0x2002, 0x2003, 0x2004, 0x2005,
  0x2006, 0x2007, 0x2008, 0x2009, 0x200a, 0x2028, 0x2029, 0x202f, 0x205f, 0x3000,
]);

/** trimSpace removes leading and trailing white space, as Go's strings.TrimSpace. */
export function trimSpace(s: string): string {
  let start = 0;
  let end = s.length;
  while (start < end && whiteSpace.has(s.charCodeAt(start))) start++;
  while (end > start && whiteSpace.has(s.charCodeAt(end - 1))) end--;
  return s.slice(start, end);
}

/** utf8 encodes s; a lone surrogate becomes U+FFFD, as in Go. */
export function utf8(s: string): Uint8Array {
  const out: number[] = [];
  for (const ch of s) {
    let c = ch.codePointAt(0) ?? 0xfffd;
    if (c >= 0xd800 && c <= 0xdfff) c = 0xfffd;
    if (c < 0x80) {
      out.push(c);
    } else if (c < 0x800) {
      out.push(0xc0 | (c >> 6), 0x80 | (c & 63));
    } else if (c < 0x10000) {
      out.push(0xe0 | (c >> 12), 0x80 | ((c >> 6) & 63), 0x80 | (c & 63));
    } else {
      out.push(0xf0 | (c >> 18), 0x80 | ((c >> 12) & 63), 0x80 | ((c >> 6) & 63), 0x80 | (c & 63));
    }
  }
  return Uint8Array.from(out);
}

/** concat joins byte strings. */
export function concat(...parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/** hex writes b in lower-case hexadecimal. */
export function hex(b: Uint8Array): string {
  return Array.from(b, (x) => x.toString(16).padStart(2, "0")).join("");
}

/** equalBytes reports whether a and b hold the same bytes. */
export function equalBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}
