import type { Bench } from "@kb/runtime";
import attention from "../attention.js";
import branchy from "../branchy.js";
import exp from "../exp.js";
import gemm from "../gemm.js";
import gemmDot from "../gemm-dot.js";
import rowSum from "../row-sum.js";
import softmax from "../softmax.js";
import vectorAdd from "../vector-add.js";

/** Every bench with small params, and the rows of its (first-dimension-split) output. */
export const SMALL: readonly (readonly [Bench, Record<string, unknown>, number])[] = [
  [gemm, { M: 100, N: 64, K: 96 }, 100],
  [gemmDot, { M: 100, N: 80, K: 96, tm: 32, tn: 32, tk: 32 }, 100],
  [vectorAdd, { n: 1000, chunk: 48 }, 1000],
  [exp, { n: 1000, chunk: 48 }, 1000],
  [rowSum, { rows: 37, cols: 24, blockRows: 2 }, 37],
  [softmax, { rows: 37, cols: 24, blockRows: 2 }, 37],
  [attention, { S: 40, D: 16, block: 8 }, 40],
  [branchy, { rows: 70, cols: 16, tileRows: 4 }, 70],
];
