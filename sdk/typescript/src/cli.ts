#!/usr/bin/env node
// licentia-verify checks licence keys and verdicts from the command line,
// with the products' public keys from files (a product as the
// administration API shows it). It prints one JSON object per input and
// exits 0 when every input passes, 1 when one is refused, 2 on a usage
// error.
import { readFileSync } from "node:fs";

import { checkVerdict } from "./check.js";
import { VerificationError } from "./errors.js";
import { hex } from "./text.js";
import { parseTime } from "./time.js";
import { verifyVerdict } from "./verdict.js";
import { Verifier, productFromJSON, type Product } from "./verifier.js";

const usage = `usage:
  licentia-verify key --product FILE [--product FILE ...] (KEY | --batch)
  licentia-verify verdict --product FILE [--machine-id ID --licence-id ID
      [--now TIME] [--major N] [--require-seat]] (VERDICT | --batch)

FILE holds a product as GET /v1/admin/products/{id} answers it. With
--batch, standard input holds one JSON string per line.
`;

class UsageError extends Error {}

interface Args {
  command: string;
  products: Product[];
  inputs: string[] | null; // null: --batch
  machineId?: string;
  licenceId?: string;
  now?: Date;
  major?: number;
  requireSeat: boolean;
}

function parseArgs(argv: string[]): Args {
  const [command, ...rest] = argv;
  if (command !== "key" && command !== "verdict") throw new UsageError("the commands are key and verdict");
  const a: Args = { command, products: [], inputs: [], requireSeat: false };
  let batch = false;
  const value = (flag: string): string => {
    const v = rest.shift();
    if (v === undefined) throw new UsageError(`${flag} needs a value`);
    return v;
  };
  while (rest.length > 0) {
    const arg = rest.shift() ?? "";
    switch (arg) {
      case "--product":
        a.products.push(readProduct(value(arg)));
        break;
      case "--machine-id":
        a.machineId = value(arg);
        break;
      case "--licence-id":
        a.licenceId = value(arg);
        break;
      case "--now": {
        const t = parseTime(value(arg));
        if (t === null) throw new UsageError("--now must be an RFC 3339 time");
        a.now = t;
        break;
      }
      case "--major":
        a.major = Number.parseInt(value(arg), 10);
        if (!(a.major >= 0)) throw new UsageError("--major must be a number");
        break;
      case "--require-seat":
        a.requireSeat = true;
        break;
      case "--batch":
        batch = true;
        break;
      default:
        if (arg.startsWith("--")) throw new UsageError(`unknown flag ${arg}`);
        a.inputs?.push(arg);
    }
  }
  if (a.products.length === 0) throw new UsageError("--product is required");
  if (command === "verdict" && a.products.length > 1) throw new UsageError("verdict takes one --product");
  if ((a.machineId === undefined) !== (a.licenceId === undefined)) {
    throw new UsageError("--machine-id and --licence-id go together");
  }
  if (batch === (a.inputs?.length !== 0)) throw new UsageError(`give one ${command} or --batch`);
  if (batch) a.inputs = null;
  return a;
}

function readProduct(path: string): Product {
  let o: unknown;
  try {
    o = JSON.parse(readFileSync(path, "utf8"));
  } catch (e) {
    throw new UsageError(`${path}: ${(e as Error).message}`);
  }
  const obj = o as Record<string, unknown>;
  const p = typeof obj.product === "object" && obj.product !== null ? obj.product : obj;
  return productFromJSON(p as Record<string, unknown>);
}

function run(a: Args, verifier: Verifier, input: string): { out: object; pass: boolean } {
  try {
    if (a.command === "key") {
      const k = verifier.verifyLicenceKey(input);
      return {
        out: { outcome: "valid", product_id: k.productId, licence_id: k.licenceId, public_key: hex(k.publicKey) },
        pass: true,
      };
    }
    const product = a.products[0] as Product;
    if (a.machineId === undefined || a.licenceId === undefined) {
      return { out: { outcome: "valid", verdict: verifyVerdict(input, product) }, pass: true };
    }
    const j = checkVerdict(input, product, {
      machineId: a.machineId,
      licenceId: a.licenceId,
      now: a.now,
      major: a.major,
      requireSeat: a.requireSeat,
    });
    return { out: { outcome: "valid", ...j }, pass: j.valid };
  } catch (e) {
    if (e instanceof VerificationError) return { out: { outcome: e.code }, pass: false };
    throw e;
  }
}

async function main(): Promise<number> {
  let a: Args;
  let verifier: Verifier;
  try {
    a = parseArgs(process.argv.slice(2));
    verifier = new Verifier(...(a.command === "key" ? a.products : []));
  } catch (e) {
    process.stderr.write(`licentia-verify: ${(e as Error).message}\n${usage}`);
    return 2;
  }
  let inputs = a.inputs;
  if (inputs === null) {
    process.stdin.setEncoding("utf8");
    let text = "";
    for await (const chunk of process.stdin) text += chunk;
    inputs = [];
    for (const line of text.split("\n")) {
      if (line.trim() === "") continue;
      const s: unknown = JSON.parse(line);
      if (typeof s !== "string") throw new Error("--batch: each line must be a JSON string");
      inputs.push(s);
    }
  }
  let code = 0;
  for (const input of inputs) {
    const r = run(a, verifier, input);
    process.stdout.write(JSON.stringify(r.out) + "\n");
    if (!r.pass) code = 1;
  }
  return code;
}

process.exitCode = await main();
