import { KbError } from "@kb/errors";
import { DTYPE_BYTES } from "@kb/tensor";
import { REDUCE_OPS, type ReduceOp, type Region } from "./kernel-support.js";
import { COLLECTIVES } from "./registry.js";

/** What the process group's methods throw for; the error of the others lists the rest. */
export const SUPPORTED: readonly string[] = [
  ...COLLECTIVES,
  "allToAllSingle",
  "send",
  "recv",
  "isend",
  "irecv",
  "batchIsendIrecv",
  "barrier",
  "getRank",
  "getWorldSize",
];

/** Bytes of `region`. */
export function bytesOf(region: Region): number {
  return region.count * DTYPE_BYTES[region.dtype];
}

export function unsupported(method: string): never {
  throw new KbError(
    "RUNTIME_INVALID",
    `processGroup.${method} is not supported by the "ahbm" backend; supported: ${SUPPORTED.join(", ")}. Write a kernel with tl.send / tl.recv for other patterns (docs/ccl-author-guide.md).`,
  );
}

export function checkOp(op: ReduceOp): void {
  if (!REDUCE_OPS.includes(op)) {
    throw new KbError(
      "RUNTIME_INVALID",
      `unknown reduction ${JSON.stringify(op)}; use ${REDUCE_OPS.map((o) => `"${o}"`).join(", ")}.`,
    );
  }
}

export function checkIndex(what: string, value: number, limit: number): number {
  if (!Number.isInteger(value) || value < 0 || value >= limit) {
    throw new KbError(
      "RUNTIME_INVALID",
      `initProcessGroup: ${what} must be ${what === "lanes" ? `1..${limit}` : `0..${limit - 1}`}, got ${what === "lanes" ? value + 1 : value}.`,
    );
  }
  return value;
}
