const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

const decodeMap = (() => {
  const m = new Int8Array(128).fill(-1);
  for (let i = 0; i < alphabet.length; i++) m[alphabet.charCodeAt(i)] = i;
  return m;
})();

/**
 * decodeStrict reads base64url without padding as Go's
 * base64.RawURLEncoding.Strict() does: unused trailing bits must be zero
 * and "=" is refused, but carriage returns and line feeds are skipped
 * wherever they are, so what Go accepts is accepted here too.
 */
export function decodeStrict(s: string): Uint8Array | null {
  const vals: number[] = [];
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c === 0x0a || c === 0x0d) continue;
    const v = c < 128 ? (decodeMap[c] ?? -1) : -1;
    if (v < 0) return null;
    vals.push(v);
  }
  const rest = vals.length % 4;
  if (rest === 1) return null;
  const out = new Uint8Array(Math.floor((vals.length * 6) / 8));
  let filled = 0;
  let acc = 0;
  let bits = 0;
  for (const v of vals) {
    acc = ((acc << 6) | v) & 0xffff;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out[filled++] = (acc >> bits) & 0xff;
    }
  }
  if ((acc & ((1 << bits) - 1)) !== 0) return null;
  return out;
}

/** encode writes b in base64url without padding. */
export function encode(b: Uint8Array): string {
  let out = "";
  let acc = 0;
  let bits = 0;
  for (const x of b) {
    acc = ((acc << 8) | x) & 0xffff;
    bits += 8;
    while (bits >= 6) {
      bits -= 6;
      out += alphabet[(acc >> bits) & 63];
    }
  }
  if (bits > 0) out += alphabet[(acc << (6 - bits)) & 63];
  return out;
}
