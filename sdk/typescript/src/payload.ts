// A verdict's payload is read as the Go SDK's encoding/json reads it into
// its Verdict struct, so both accept the same signed bytes and see the same
// values. JSON.parse cannot: it turns 3.0 into 3, loses the order of
// repeated names, and cannot tell which bytes were invalid UTF-8. Go's
// rules, which this file follows:
//
//   - the text is strict JSON (RFC 8259), checked whole before any field;
//   - names match fields case insensitively (with Unicode's simple folding:
//     "ſ" is "s" and the Kelvin sign "K" is "k"); the last match wins;
//   - an integer field takes only an integer literal within 64 bits, a
//     string field only a string; any other type makes the whole payload
//     invalid; null empties a nullable field and leaves any other as it is;
//   - in strings, each byte of invalid UTF-8 and each unpaired surrogate
//     escape reads as U+FFFD;
//   - a top-level null reads as an empty payload; any other non-object is
//     invalid;
//   - features is an array of objects { code, expires_at } or null; each
//     element is read into the element the same place of an earlier
//     features array of this payload, when there was one, as Go reuses a
//     slice's elements: a name an element leaves out keeps the earlier
//     value, and a null element keeps the earlier element whole. null and
//     [] start afresh.

/** Verdict is the payload of a verdict (docs/verdict-format.md), with the format's field names. */
export interface Verdict {
  format: number;
  licence_id: string;
  product_id: string;
  machine_id: string;
  /** activation_id is the machine's live activation, or null when it holds no live seat. */
  activation_id: string | null;
  /** state is the licence's derived state: active, trial, expired, revoked. */
  state: string;
  expires_at: string | null;
  trial_ends_at: string | null;
  /** major is the major application version the licence is for. */
  major: number;
  limit_kind: string;
  limit_count: number;
  issued_at: string;
  valid_until: string;
  /** key_fingerprint names the public key that signed the verdict. */
  key_fingerprint: string;
  /**
   * features are the licence's grants in force when the verdict was signed,
   * ordered by code; absent when there are none, as the Go SDK writes it.
   */
  features?: VerdictFeature[];
}

/** VerdictFeature is a feature granted until expires_at, or for as long as the licence when null. */
export interface VerdictFeature {
  code: string;
  expires_at: string | null;
}

type Kind = "int" | "string" | "nullable" | "features";

const fields: Record<keyof Verdict, Kind> = {
  format: "int",
  licence_id: "string",
  product_id: "string",
  machine_id: "string",
  activation_id: "nullable",
  state: "string",
  expires_at: "nullable",
  trial_ends_at: "nullable",
  major: "int",
  limit_kind: "string",
  limit_count: "int",
  issued_at: "string",
  valid_until: "string",
  key_fingerprint: "string",
  features: "features",
};

// A Value keeps an array's or object's content only as deep as a field can
// take it (features: an array of objects of strings); deeper ones are
// checked and dropped as "container".
type Value =
  | { t: "string"; v: string }
  | { t: "number"; v: string }
  | { t: "bool" }
  | { t: "null" }
  | { t: "array"; items: Value[] }
  | { t: "object"; members: Array<[string, Value]> }
  | { t: "container" };

// keptDepth is how many levels of arrays and objects the reader keeps: the
// payload, features, a feature.
const keptDepth = 3;

class SyntaxFault extends Error {}

/** decodePayload reads payload bytes, or answers null where Go's json.Unmarshal fails. */
export function decodePayload(b: Uint8Array): Verdict | null {
  let top: Value;
  try {
    top = new Reader(b).document();
  } catch (e) {
    if (e instanceof SyntaxFault) return null;
    throw e;
  }
  const out: Verdict = {
    format: 0,
    licence_id: "",
    product_id: "",
    machine_id: "",
    activation_id: null,
    state: "",
    expires_at: null,
    trial_ends_at: null,
    major: 0,
    limit_kind: "",
    limit_count: 0,
    issued_at: "",
    valid_until: "",
    key_fingerprint: "",
  };
  if (top.t !== "object") return top.t === "null" ? out : null;
  const set = out as unknown as Record<string, unknown>;
  const features = new Features();
  for (const [name, v] of top.members) {
    const field = foldName(name);
    const kind = (fields as Record<string, Kind>)[field];
    if (kind === undefined || !Object.hasOwn(fields, field)) continue;
    if (kind === "features") {
      if (!features.read(v)) return null;
      continue;
    }
    if (v.t === "null") {
      if (kind === "nullable") set[field] = null;
      continue;
    }
    if (kind === "int") {
      if (v.t !== "number" || !isInt64(v.v)) return null;
      set[field] = Number(BigInt(v.v)); // BigInt: "-0" is 0, as in Go
    } else {
      if (v.t !== "string") return null;
      set[field] = v.v;
    }
  }
  const list = features.list();
  if (list.length > 0) out.features = list;
  return out;
}

// Features reads features members as Go reads them into a slice field:
// elements are decoded into the slice's backing array, which a later
// features array of the same payload reuses (its elements keep what the
// new ones leave out); null drops the slice and [] makes an empty one.
class Features {
  #backing: VerdictFeature[] = [];
  #len = 0;

  // read takes one features member; false where Go fails.
  read(v: Value): boolean {
    if (v.t === "null" || (v.t === "array" && v.items.length === 0)) {
      this.#backing = [];
      this.#len = 0;
      return true;
    }
    if (v.t !== "array") return false;
    while (this.#backing.length < v.items.length) this.#backing.push({ code: "", expires_at: null });
    this.#len = v.items.length;
    return v.items.every((item, i) => item.t === "null" || readFeature(item, this.#backing[i] as VerdictFeature));
  }

  list(): VerdictFeature[] {
    return this.#backing.slice(0, this.#len).map((f) => ({ ...f }));
  }
}

// readFeature reads one element into f; false where Go fails.
function readFeature(item: Value, f: VerdictFeature): boolean {
  if (item.t !== "object") return false;
  for (const [name, m] of item.members) {
    const field = foldName(name);
    if (field !== "code" && field !== "expires_at") continue;
    if (m.t === "null") {
      if (field === "expires_at") f.expires_at = null;
      continue;
    }
    if (m.t !== "string") return false;
    if (field === "code") f.code = m.v;
    else f.expires_at = m.v;
  }
  return true;
}

// foldName lower-cases a name under Unicode's simple case folding, as far
// as it can make one of the fields' names: the fields are ASCII, and the
// only non-ASCII letters that fold to ASCII are long s and the Kelvin sign.
function foldName(s: string): string {
  return s.replace(/[A-Z\u017f\u212a]/g, (c) => (c === "\u017f" ? "s" : c === "\u212a" ? "k" : c.toLowerCase()));
}

const int64Min = -(2n ** 63n);
const int64Max = 2n ** 63n - 1n;

function isInt64(lit: string): boolean {
  if (!/^-?(0|[1-9][0-9]*)$/.test(lit)) return false;
  const n = BigInt(lit);
  return n >= int64Min && n <= int64Max;
}

class Reader {
  #b: Uint8Array;
  #i = 0;

  constructor(b: Uint8Array) {
    this.#b = b;
  }

  // document reads the whole text: its top-level value, with the content
  // of arrays and objects kept keptDepth levels deep.
  document(): Value {
    this.#ws();
    const top = this.#value(keptDepth);
    this.#ws();
    if (this.#i !== this.#b.length) throw new SyntaxFault();
    return top;
  }

  #object(keep: number): Value {
    const members: Array<[string, Value]> = [];
    this.#i++; // {
    this.#ws();
    if (this.#peek() === 0x7d) {
      this.#i++;
      return { t: "object", members };
    }
    for (;;) {
      this.#ws();
      const name = this.#string();
      this.#ws();
      this.#expect(0x3a); // :
      this.#ws();
      members.push([name, this.#value(keep)]);
      this.#ws();
      const c = this.#next();
      if (c === 0x7d) return { t: "object", members };
      if (c !== 0x2c) throw new SyntaxFault();
    }
  }

  #array(keep: number): Value {
    const items: Value[] = [];
    this.#i++; // [
    this.#ws();
    if (this.#peek() === 0x5d) {
      this.#i++;
      return { t: "array", items };
    }
    for (;;) {
      this.#ws();
      items.push(this.#value(keep));
      this.#ws();
      const c = this.#next();
      if (c === 0x5d) return { t: "array", items };
      if (c !== 0x2c) throw new SyntaxFault();
    }
  }

  // value reads one value; an object or array keeps its content while keep
  // is above 0, and is only checked past it (no field takes it), so the
  // recursion is at most keptDepth deep.
  #value(keep: number): Value {
    const c = this.#peek();
    if (c === 0x22) return { t: "string", v: this.#string() };
    if (keep > 0 && c === 0x7b) return this.#object(keep - 1);
    if (keep > 0 && c === 0x5b) return this.#array(keep - 1);
    if (c === 0x7b || c === 0x5b) {
      this.#container();
      return { t: "container" };
    }
    if (c === 0x74) return this.#literal("true", { t: "bool" });
    if (c === 0x66) return this.#literal("false", { t: "bool" });
    if (c === 0x6e) return this.#literal("null", { t: "null" });
    return { t: "number", v: this.#number() };
  }

  // container checks nested objects and arrays with a stack rather than
  // recursion, so deep nesting cannot overflow the call stack.
  #container(): void {
    const open: number[] = [];
    for (;;) {
      // At a value.
      this.#ws();
      const c = this.#peek();
      if (c === 0x7b || c === 0x5b) {
        this.#i++;
        open.push(c);
        this.#ws();
        if (this.#peek() === (c === 0x7b ? 0x7d : 0x5d)) {
          this.#i++;
          open.pop();
        } else {
          if (c === 0x7b) this.#memberName();
          continue;
        }
      } else if (c === 0x22) {
        this.#string();
      } else if (c === 0x74) {
        this.#literal("true", null);
      } else if (c === 0x66) {
        this.#literal("false", null);
      } else if (c === 0x6e) {
        this.#literal("null", null);
      } else {
        this.#number();
      }
      // After a value: close what ends here, or go on to the next.
      for (;;) {
        const top = open[open.length - 1];
        if (top === undefined) return;
        this.#ws();
        const d = this.#next();
        if (d === 0x2c) {
          if (top === 0x7b) this.#memberName();
          break;
        }
        if (d !== (top === 0x7b ? 0x7d : 0x5d)) throw new SyntaxFault();
        open.pop();
      }
    }
  }

  #memberName(): void {
    this.#ws();
    this.#string();
    this.#ws();
    this.#expect(0x3a);
  }

  #literal<T>(word: string, v: T): T {
    for (let k = 0; k < word.length; k++) {
      if (this.#next() !== word.charCodeAt(k)) throw new SyntaxFault();
    }
    return v;
  }

  #number(): string {
    const start = this.#i;
    if (this.#peek() === 0x2d) this.#i++;
    if (this.#peek() === 0x30) {
      this.#i++;
    } else if (this.#digits() === 0) {
      throw new SyntaxFault();
    }
    if (this.#peek() === 0x2e) {
      this.#i++;
      if (this.#digits() === 0) throw new SyntaxFault();
    }
    if (this.#peek() === 0x65 || this.#peek() === 0x45) {
      this.#i++;
      if (this.#peek() === 0x2b || this.#peek() === 0x2d) this.#i++;
      if (this.#digits() === 0) throw new SyntaxFault();
    }
    return String.fromCharCode(...this.#b.subarray(start, this.#i));
  }

  #digits(): number {
    const start = this.#i;
    while (this.#peek() >= 0x30 && this.#peek() <= 0x39) this.#i++;
    return this.#i - start;
  }

  #string(): string {
    this.#expect(0x22);
    const units: number[] = [];
    for (;;) {
      const c = this.#next();
      if (c === 0x22) break;
      if (c < 0x20) throw new SyntaxFault();
      if (c === 0x5c) {
        this.#escape(units);
        continue;
      }
      if (c < 0x80) {
        units.push(c);
        continue;
      }
      this.#i--;
      pushCodePoint(units, this.#rune());
    }
    let s = "";
    for (let k = 0; k < units.length; k += 4096) s += String.fromCharCode(...units.slice(k, k + 4096));
    return s;
  }

  #escape(units: number[]): void {
    const c = this.#next();
    const simple: Record<number, number> = { 0x22: 0x22, 0x5c: 0x5c, 0x2f: 0x2f, 0x62: 8, 0x66: 12, 0x6e: 10, 0x72: 13, 0x74: 9 };
    if (c !== 0x75) {
      const u = simple[c];
      if (u === undefined) throw new SyntaxFault();
      units.push(u);
      return;
    }
    const r = this.#hex4();
    if (r < 0xd800 || r > 0xdfff) {
      units.push(r);
      return;
    }
    // A high surrogate followed by an escaped low one is a pair; anything
    // else is U+FFFD, and what follows is read on its own.
    if (r <= 0xdbff && this.#b[this.#i] === 0x5c && this.#b[this.#i + 1] === 0x75) {
      const save = this.#i;
      this.#i += 2;
      const lo = this.#hex4();
      if (lo >= 0xdc00 && lo <= 0xdfff) {
        units.push(r, lo);
        return;
      }
      this.#i = save;
    }
    units.push(0xfffd);
  }

  #hex4(): number {
    let r = 0;
    for (let k = 0; k < 4; k++) {
      const c = this.#next();
      const d = c >= 0x30 && c <= 0x39 ? c - 0x30 : c >= 0x61 && c <= 0x66 ? c - 0x57 : c >= 0x41 && c <= 0x46 ? c - 0x37 : -1;
      if (d < 0) throw new SyntaxFault();
      r = r * 16 + d;
    }
    return r;
  }

  // rune decodes one UTF-8 sequence as Go's utf8.DecodeRune: an invalid
  // byte is U+FFFD and only that byte is consumed.
  #rune(): number {
    const b = this.#b;
    const i = this.#i;
    const c0 = b[i] ?? 0;
    const cont = (k: number, lo = 0x80, hi = 0xbf): boolean => {
      const x = b[i + k];
      return x !== undefined && x >= lo && x <= hi;
    };
    let n = 0;
    let lo = 0x80;
    let hi = 0xbf;
    if (c0 >= 0xc2 && c0 <= 0xdf) n = 2;
    else if (c0 >= 0xe0 && c0 <= 0xef) {
      n = 3;
      if (c0 === 0xe0) lo = 0xa0;
      if (c0 === 0xed) hi = 0x9f;
    } else if (c0 >= 0xf0 && c0 <= 0xf4) {
      n = 4;
      if (c0 === 0xf0) lo = 0x90;
      if (c0 === 0xf4) hi = 0x8f;
    }
    if (n === 0 || !cont(1, lo, hi) || (n > 2 && !cont(2)) || (n > 3 && !cont(3))) {
      this.#i++;
      return 0xfffd;
    }
    this.#i += n;
    let r = c0 & (n === 2 ? 0x1f : n === 3 ? 0x0f : 0x07);
    for (let k = 1; k < n; k++) r = (r << 6) | ((b[i + k] ?? 0) & 0x3f);
    return r;
  }

  #ws(): void {
    for (;;) {
      const c = this.#b[this.#i];
      if (c !== 0x20 && c !== 0x09 && c !== 0x0a && c !== 0x0d) return;
      this.#i++;
    }
  }

  #peek(): number {
    return this.#b[this.#i] ?? -1;
  }

  #next(): number {
    const c = this.#b[this.#i];
    if (c === undefined) throw new SyntaxFault();
    this.#i++;
    return c;
  }

  #expect(c: number): void {
    if (this.#next() !== c) throw new SyntaxFault();
  }
}

function pushCodePoint(units: number[], r: number): void {
  if (r < 0x10000) {
    units.push(r);
    return;
  }
  r -= 0x10000;
  units.push(0xd800 + (r >> 10), 0xdc00 + (r & 0x3ff));
}
