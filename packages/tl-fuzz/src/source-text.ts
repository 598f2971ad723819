import type { Rows } from "./program.js";

// Pieces of the kernel source the tester prints (codegen.ts, round3-source.ts).

/** The rows of a value in the kernel: the block's (`rows`) or a fixed count. */
export function rowsOf(rows: Rows): string {
  return rows === "block" ? "rows" : String(rows);
}

/** A number as JS source: NaN, Infinity, -Infinity by their names, -0 kept. */
export function literal(value: number): string {
  if (Object.is(value, -0)) return "-0";
  return String(value);
}

/** A string as JS source. */
export function q(text: string): string {
  return JSON.stringify(text);
}

/** The global row of each row of the block, `[rows, 1]` i32. */
export const blockRowsIndex = "tl.expandDims(await tl.add(tl.arange(0, rows), b * BR), 1)";
