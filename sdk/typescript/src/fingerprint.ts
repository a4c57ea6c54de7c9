import { sha256 } from "./crypto.js";
import { hex } from "./text.js";

/** fingerprint names a public key: the first 8 bytes of its SHA-256, in hex, as a verdict's key_fingerprint. */
export function fingerprint(publicKey: Uint8Array): string {
  return hex(sha256(publicKey).slice(0, 8));
}
