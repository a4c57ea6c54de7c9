// The few Node.js built-ins the package and its tests use. Declared here so
// that TypeScript is the package's only development dependency; none of
// these types appears in the package's own declarations.

declare module "node:crypto" {
  interface KeyObject {
    readonly type: string;
    export(options: { format: "jwk" }): { x?: string; d?: string };
  }
  interface Hash {
    update(data: Uint8Array | string): Hash;
    digest(): Uint8Array;
  }
  function createHash(algorithm: string): Hash;
  function createPublicKey(key: { key: object; format: "jwk" }): KeyObject;
  function createPrivateKey(key: { key: object; format: "jwk" }): KeyObject;
  function generateKeyPairSync(type: "ed25519"): { publicKey: KeyObject; privateKey: KeyObject };
  function verify(algorithm: null, data: Uint8Array, key: KeyObject, signature: Uint8Array): boolean;
  function sign(algorithm: null, data: Uint8Array, key: KeyObject): Uint8Array;
}

declare module "node:fs" {
  function readFileSync(path: string | URL): Uint8Array;
  function readFileSync(path: string | URL, encoding: "utf8"): string;
}

declare module "node:child_process" {
  interface SpawnSyncResult {
    status: number | null;
    stdout: string;
    stderr: string;
    error?: Error;
  }
  function spawnSync(
    command: string,
    args: string[],
    options: { input?: string; encoding: "utf8" },
  ): SpawnSyncResult;
}

declare module "node:test" {
  function test(name: string, fn: () => void | Promise<void>): Promise<void>;
  export default test;
}

declare module "node:assert/strict" {
  function ok(value: unknown, message?: string): asserts value;
  function equal<T>(actual: unknown, expected: T, message?: string): asserts actual is T;
  function deepEqual<T>(actual: unknown, expected: T, message?: string): asserts actual is T;
  function throws(fn: () => unknown, expected?: object, message?: string): void;
  const assert: {
    ok: typeof ok;
    equal: typeof equal;
    deepEqual: typeof deepEqual;
    throws: typeof throws;
  };
  export default assert;
}

declare class URL {
  constructor(url: string, base?: string | URL);
  readonly pathname: string;
}

declare class TextEncoder {
  encode(s: string): Uint8Array;
}

interface ImportMeta {
  readonly url: string;
}

declare const process: {
  readonly argv: string[];
  readonly execPath: string;
  exitCode: number | undefined;
  readonly stdin: { setEncoding(e: "utf8"): void; [Symbol.asyncIterator](): AsyncIterator<string> };
  readonly stdout: { write(s: string): boolean };
  readonly stderr: { write(s: string): boolean };
};
