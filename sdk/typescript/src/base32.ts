// Crockford's base32 alphabet: digits and upper-case letters without I, L,
// O and U, so no two characters look alike. Input is read case
// insensitively; no other character is mapped, so every edit of a key is
// detected.
const alphabet = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";

const decodeMap = (() => {
  const m = new Int8Array(128).fill(-1);
  for (let i = 0; i < alphabet.length; i++) {
    const c = alphabet.charCodeAt(i);
    m[c] = i;
    m[c | 0x20] = i; // lower case
  }
  return m;
})();

/** encodedLen is the number of characters encoding n bytes. */
export function encodedLen(n: number): number {
  return Math.floor((n * 8 + 4) / 5);
}

/**
 * decode reads exactly n bytes from s, most significant bits first. It
 * answers null for a wrong length, a character outside the alphabet, or
 * padding bits that are not zero, so each byte string has exactly one
 * encoding.
 */
export function decode(s: string, n: number): Uint8Array | null {
  if (s.length !== encodedLen(n)) return null;
  const out = new Uint8Array(n);
  let filled = 0;
  let acc = 0;
  let bits = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    const v = c < 128 ? (decodeMap[c] ?? -1) : -1;
    if (v < 0) return null;
    acc = ((acc << 5) | v) & 0xffff;
    bits += 5;
    if (bits >= 8) {
      bits -= 8;
      if (filled < n) out[filled++] = (acc >> bits) & 0xff;
    }
  }
  if ((acc & ((1 << bits) - 1)) !== 0) return null;
  return filled === n ? out : null;
}
