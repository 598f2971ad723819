/**
 * The PE_GEMM fidelity table: `pnpm bench:pe-gemm [--json FILE]`.
 *
 * For each of the 66 rows of SCALE-Sim v2's reference (`__fixtures__/scalesim-reference.json`:
 * 11 GEMM shapes on 32x32 and 128x128 arrays in os, ws and is), `pe_gemm_v2`'s cycles with the
 * row's array and dataflow (`fold_overlap: false`, `overhead_cycles: 0`, f16 at one cycle per MAC
 * step) next to SCALE-Sim's count and the difference; its folds and cycles per fold against
 * SCALE-Sim's; v2 with `fold_overlap: true`; and `pe_gemm_v1` (its defaults, the optimistic
 * bound), to show the change. A row that differs exits with code 1.
 *
 * Cycles are closed forms; nothing here is wall-clock.
 */
import { parseSuiteOptions, printTable, writeJson } from "../report.js";
import { compareWithScaleSim } from "./scalesim.js";

const SCRIPT = "bench:pe-gemm";
const USAGE = `Usage: pnpm ${SCRIPT} [--json FILE]

pe_gemm_v2 (fold_overlap false, overhead_cycles 0, f16) against SCALE-Sim v2 on its 66 reference
rows (32x32 and 128x128 arrays, os / ws / is), with v2 overlapped and pe_gemm_v1 for comparison.
Prints a table; --json writes the rows. A row that does not match exits with code 1.`;

const options = parseSuiteOptions(SCRIPT, USAGE, [], 1);
if (options !== null) {
  const rows = compareWithScaleSim();
  const pair = (folds: readonly [number, number]) => `${folds[0]}x${folds[1]}`;
  printTable(
    [
      "array",
      "flow",
      "M",
      "N",
      "K",
      "folds",
      "SCALE-Sim",
      "v2",
      "v2 - SCALE-Sim",
      "per fold",
      "v2 overlap",
      "v1",
      "v1 / SCALE-Sim",
      "util",
    ],
    rows.map((row) => [
      row.array,
      row.dataflow,
      String(row.m),
      String(row.n),
      String(row.k),
      pair(row.folds),
      `${row.scalesimCycles}${row.derived ? "*" : ""}`,
      String(row.v2Cycles),
      String(row.difference),
      String(row.perFoldCycles),
      String(row.v2OverlapCycles),
      String(row.v1Cycles),
      (row.v1Cycles / row.scalesimCycles).toFixed(3),
      `${(row.utilisation * 100).toFixed(1)}%`,
    ]),
    2,
  );
  const matching = rows.filter(
    (row) =>
      row.difference === 0 &&
      pair(row.folds) === pair(row.scalesimFolds) &&
      row.perFoldCycles === row.scalesimPerFoldCycles,
  );
  const v1Ratios = rows.map((row) => row.scalesimCycles / row.v1Cycles);
  process.stdout.write(
    [
      "",
      "* derived from SCALE-Sim's formula, not simulated (its IS path is quadratic there; see the fixture's README).",
      `pe_gemm_v2 matches SCALE-Sim on ${matching.length}/${rows.length} rows (cycles, folds and cycles per fold).`,
      `pe_gemm_v1 is optimistic by ${Math.min(...v1Ratios).toFixed(2)}x to ${Math.max(...v1Ratios).toFixed(2)}x (SCALE-Sim / v1).`,
      "",
    ].join("\n"),
  );
  if (options.json !== undefined) {
    writeJson(options.json, { suite: SCRIPT, matching: matching.length, total: rows.length, rows });
  }
  if (matching.length !== rows.length) {
    for (const row of rows.filter((candidate) => !matching.includes(candidate))) {
      process.stderr.write(
        `${SCRIPT}: ${row.array} ${row.dataflow} ${row.m}x${row.n}x${row.k}: v2 ${row.v2Cycles} cycles (${pair(row.folds)} folds of ${row.perFoldCycles}), SCALE-Sim ${row.scalesimCycles} (${pair(row.scalesimFolds)} of ${row.scalesimPerFoldCycles})\n`,
      );
    }
    process.exitCode = 1;
  }
}
