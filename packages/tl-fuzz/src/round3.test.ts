import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { buildProgram, type RawStep } from "./build.js";
import { check } from "./check.js";
import { kernelSource, reproBench } from "./codegen.js";
import { evaluate } from "./evaluate.js";
import type { Program, Step } from "./program.js";

// The round-3 steps (kinds 27-29): atomics several programs (PEs) meet on, scatters to other
// blocks' rows, and gathers in a second launch. Each: the drawn kernel, the evaluator's outputs
// against a plain loop over the program's values, and phase 1 / phase 2 / evaluator agreement.

/** 10 rows in blocks of 4: 3 blocks, one PE each (or 40 rows for `rows: 39`). */
function program(steps: RawStep[], rows = 9): Program {
  return buildProgram({ seed: 5, rows, blockRows: 3, pes: 1, persistent: false, special: false, steps });
}

/** Kind 0 with a = 0: a new split input of 7 columns (b = 4) of DTYPES[c] (0 f32, 2 bf16, 4 i32). */
const load = (c: number): RawStep => ({ kind: 0, a: 0, b: 4, c, d: 0 });

function stepOf<K extends Step["kind"]>(p: Program, kind: K): Extract<Step, { kind: K }> {
  const step = p.steps.find((s) => s.kind === kind);
  if (step === undefined) throw new Error(`no ${kind} step in ${p.steps.map((s) => s.kind).join(", ")}`);
  return step as Extract<Step, { kind: K }>;
}

const values = (p: Program, input: number) => p.inputs[input]?.values ?? [];
const init = (p: Program, output: number) => [...(p.outputs[output]?.init ?? [])];

describe("atomics across programs (kind 27)", () => {
  it("a shared atomicAdd through loaded ids % M: every program's rows summed into M rows, the same on 3 PEs", async () => {
    // b = 0 add; c = 26: shared, M = 2, no mask, loaded ids; d = 1: the value v0.
    const p = program([load(0), { kind: 27, a: 0, b: 0, c: 26, d: 1 }]);
    const step = stepOf(p, "atomic");
    expect(step).toMatchObject({ op: "add", rows: "shared", val: 0, cmp: null, on: null });
    expect(p.outputs[step.target]?.shape).toEqual([2, 7]);
    expect(p.pes).toBe(3);
    expect(kernelSource(p)).toContain(
      `await tl.atomicAdd(O0, v0, { offsets: await tl.add(await tl.mul(await tl.mod(await tl.load(X1.at(b * BR, 0), [rows, 1], "i32"), 2), 7), tl.expandDims(tl.arange(0, 7), 0)) }); // shared`,
    );
    const [x, ids, sums] = [values(p, 0), values(p, 1), init(p, 0)];
    ids.forEach((id, g) => {
      for (let j = 0; j < 7; j++) {
        const at = (id % 2) * 7 + j;
        sums[at] = (sums[at] as number) + (x[g * 7 + j] as number);
      }
    });
    expect([...(evaluate(p)[0]?.data ?? [])]).toEqual(sums);
    expect((await check(p)).failure).toBeNull();
  });

  it("a shared float sum whose partial sums are not all exact (bf16, 40 rows) is drawn as atomicMax; f32 stays a sum", () => {
    const shared: RawStep = { kind: 27, a: 0, b: 0, c: 0, d: 1 };
    expect(stepOf(program([load(2), shared], 39), "atomic").op).toBe("max");
    expect(stepOf(program([load(0), shared], 39), "atomic").op).toBe("add");
  });

  it("the lock pattern: atomicCas(lock, 0, 1) by every program leaves every element 1, whatever it held", async () => {
    // b = 4 cas; c = 0 shared, M = 1, ids the global rows; a = 23: i32, 7 columns, val 1; d = 0: cmp 0.
    const p = program([load(0), { kind: 27, a: 23, b: 4, c: 0, d: 0 }]);
    const step = stepOf(p, "atomic");
    expect(step).toMatchObject({ op: "cas", rows: "shared", val: { scalar: 1 }, cmp: 0, index: null });
    expect(kernelSource(p)).toContain("await tl.atomicCas(O0, 0, 1, { offsets:");
    expect(new Set(init(p, 0))).toEqual(new Set([0, 1]));
    expect([...(evaluate(p)[0]?.data ?? [])]).toEqual(new Array(7).fill(1));
    expect((await check(p)).failure).toBeNull();
  });

  it("a private atomicXchg with repeated columns: old values in row-major order, the last write of a column remains", async () => {
    // b = 3 xchg; c = 1: the block's own rows, columns idx (repeats); d = 1: the value v0.
    const p = program([load(0), { kind: 27, a: 0, b: 3, c: 1, d: 1 }]);
    const step = stepOf(p, "atomic");
    expect(step).toMatchObject({ op: "xchg", rows: "private", val: 0 });
    const [x, idx, target] = [values(p, 0), values(p, 1), init(p, 0)];
    expect(new Set(idx).size).toBeLessThan(7); // the drawn columns repeat
    const old: number[] = [];
    for (let g = 0; g < 10; g++)
      idx.forEach((col, j) => {
        old.push(target[g * 7 + col] as number);
        target[g * 7 + col] = x[g * 7 + j] as number;
      });
    const [finals, olds] = evaluate(p);
    expect([...(finals?.data ?? [])]).toEqual(target);
    expect([...(olds?.data ?? [])]).toEqual(old); // the old values, stored after the loop
    expect((await check(p)).failure).toBeNull();
  });
});

describe("scatters to other blocks' rows (kind 28)", () => {
  it("rows of a permutation: element (g, j) lands at row ids[g], column idx[j], written by another PE's program", async () => {
    const p = program([load(0), { kind: 28, a: 0, b: 0, c: 0, d: 1 }]);
    const step = stepOf(p, "rowScatter");
    const [x, ids, idx] = [values(p, 0), values(p, step.index), values(p, step.columns)];
    expect([...ids].sort((a, b) => a - b)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(ids.some((row, g) => Math.floor(row / 4) !== Math.floor(g / 4))).toBe(true); // across blocks
    const expected = init(p, step.target);
    ids.forEach((row, g) => {
      idx.forEach((col, j) => {
        expected[row * 7 + col] = x[g * 7 + j] as number;
      });
    });
    expect([...(evaluate(p)[step.target]?.data ?? [])]).toEqual(expected);
    expect((await check(p)).failure).toBeNull();
  });

  it("rows repeated within a block (the later element wins) and a column mask; untouched elements keep the host's values", async () => {
    // b = 1: a block's rows go to its share of rows with repeats; c = 1 repeated columns; d = 9: mask j < 3.
    const p = program([load(0), { kind: 28, a: 0, b: 1, c: 1, d: 9 }]);
    const step = stepOf(p, "rowScatter");
    expect(step.on).toBe(3);
    const [x, ids, idx] = [values(p, 0), values(p, step.index), values(p, step.columns)];
    expect(new Set(ids).size).toBeLessThan(10);
    const expected = init(p, step.target);
    ids.forEach((row, g) => {
      idx.forEach((col, j) => {
        if (j < 3) expected[row * 7 + col] = x[g * 7 + j] as number;
      });
    });
    expect([...(evaluate(p)[step.target]?.data ?? [])]).toEqual(expected);
    expect((await check(p)).failure).toBeNull();
  });
});

describe("gathers in a second launch of what the first wrote (kind 29)", () => {
  it("rows ids[g] % S of a stored output, a second kernel launched after the first", async () => {
    // The load stored to O0 (kind 13), then a gather of O0's rows through loaded ids.
    const p = program([load(0), { kind: 13, a: 0, b: 0, c: 0, d: 0 }, { kind: 29, a: 0, b: 0, c: 0, d: 0 }]);
    const step = stepOf(p, "gatherBack");
    expect(step).toMatchObject({ source: 0, result: 1, on: null });
    const source = kernelSource(p);
    expect(source).toContain("async function fuzzGatherBack(tl, X0, X1, O0, O1) {");
    expect(source).toContain(
      `await tl.store(O1.at(b * BR, 0), await tl.load(O0, [rows, 7], "f32", { offsets: await tl.add(await tl.mul(await tl.mod(await tl.load(X1.at(b * BR, 0), [rows, 1], "i32"), 10), 7), tl.expandDims(tl.arange(0, 7), 0)) }));`,
    );
    const [x, ids] = [values(p, 0), values(p, step.index)];
    expect(Math.max(...ids)).toBeGreaterThanOrEqual(10); // % 10 folds them
    const expected = ids.flatMap((id) => x.slice((id % 10) * 7, (id % 10) * 7 + 7));
    expect([...(evaluate(p)[1]?.data ?? [])]).toEqual(expected);
    expect((await check(p)).failure).toBeNull();
  });

  it("gathers the final values of a shared atomic target (every program's sums) in the second launch", async () => {
    const p = program([load(0), { kind: 27, a: 0, b: 0, c: 26, d: 1 }, { kind: 29, a: 0, b: 0, c: 1, d: 4 }]);
    const step = stepOf(p, "gatherBack");
    expect(step).toMatchObject({ source: 0, on: 4 });
    const [sums, gathered] = evaluate(p);
    const ids = values(p, step.index);
    const expected = ids.flatMap((id) =>
      [...(sums?.data ?? [])].slice((id % 2) * 7, (id % 2) * 7 + 7).map((v, j) => (j < 4 ? v : step.other)),
    );
    expect([...(gathered?.data ?? [])]).toEqual(expected);
    expect((await check(p)).failure).toBeNull();
  });
});

describe("the printed repro of a round-3 kernel", () => {
  it("passes kb run --verify --check-phases on the default topology (2 cubes): its grid is one cube, as the tester's, a header of several lines included", () => {
    // A shared atomicAdd counts its programs: a grid of `{ pes }` on each of default.yaml's two
    // cubes would add every block twice.
    const p = program([load(0), { kind: 27, a: 0, b: 0, c: 26, d: 1 }, { kind: 29, a: 0, b: 0, c: 1, d: 4 }]);
    const bench = reproBench(
      p,
      evaluate(p).map((tensor) => [...tensor.data]),
      ["round 3", "a failure message\nof two lines"],
    );
    // The header's line break stays inside the comment: the file still runs.
    expect(bench.split("\n").slice(0, 3)).toEqual(["// round 3", "// a failure message", "// of two lines"]);
    expect(bench).toContain(`grid: { sips: 1, cubes: 1, pes: 3 }`);
    const bin = fileURLToPath(new URL("../../../apps/cli/dist/bin.js", import.meta.url));
    if (!existsSync(bin)) expect.fail(`${bin} is missing: build first (pnpm build), as pnpm test does.`);
    const dir = mkdtempSync(join(tmpdir(), "kb-fuzz-round3-"));
    try {
      const file = join(dir, "repro.mjs");
      writeFileSync(file, bench);
      const run = spawnSync(process.execPath, [bin, "run", file, "--verify", "--check-phases"], {
        encoding: "utf8",
      });
      expect(run.stdout).toContain("PASS: 2 of 2 outputs match");
      expect(run.status).toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);
});
