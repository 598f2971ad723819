import { describe, expect, it } from "vitest";
import { buildProgram, type RawStep } from "./build.js";
import { check } from "./check.js";
import { kernelSource } from "./codegen.js";
import { evaluate } from "./evaluate.js";
import type { Program, Step } from "./program.js";
import { SCALED_KIND } from "./scaled-steps.js";

// The dotScaled step (kind 30): the drawn kernel, the evaluator's output against a plain loop over
// the program's values (README "dotScaled"), and phase 1 / phase 2 / evaluator agreement.

/** 10 rows in blocks of 4: 3 blocks, one PE each. */
function program(steps: RawStep[]): Program {
  return buildProgram({ seed: 5, rows: 9, blockRows: 3, pes: 1, persistent: false, special: false, steps });
}

function dotScaledOf(p: Program): Extract<Step, { kind: "dotScaled" }> {
  const step = p.steps.find((s) => s.kind === "dotScaled");
  if (step === undefined) throw new Error(`no dotScaled step in ${p.steps.map((s) => s.kind).join(", ")}`);
  return step as Extract<Step, { kind: "dotScaled" }>;
}

describe("tl.dotScaled in the differential tester (kind 30)", () => {
  // a modulo 3 picks A's format (e4m3, e5m2, e2m1); B's is floor(a / 3) modulo 3 formats on.
  it.each([
    [0, "e4m3", "e4m3", false],
    [1, "e5m2", "e5m2", true],
    [2, "e2m1", "e2m1", true],
    [6, "e4m3", "e2m1", true],
    [5, "e2m1", "e4m3", false],
  ] as const)(
    "a = %i (%s x %s), weight transposed %s: the kernel, a hand loop and the machine agree",
    async (a, format, bFormat, transposed) => {
      // a: the format; b = 1: K = 64; c = 3: N = COLS[3] = 5; d: the weight's layout.
      const p = program([{ kind: SCALED_KIND, a, b: 1, c: 3, d: transposed ? 1 : 0 }]);
      const step = dotScaledOf(p);
      expect([step.format, step.bFormat]).toEqual([format, bFormat]);
      const [x, sx, w, sw] = [step.a, step.aScale, step.b, step.bScale].map((s) => {
        const load = p.steps[s];
        if (load?.kind !== "load") throw new Error("not a load");
        return p.inputs[load.input]?.values ?? [];
      }) as [number[], number[], number[], number[]];
      const source = kernelSource(p);
      expect(source).toContain(
        `await tl.dotScaled(v${step.a}, v${step.aScale}, "${format}", ${transposed ? `tl.trans(v${step.b})` : `v${step.b}`}, v${step.bScale}, "${bFormat}"`,
      );
      // Scale bytes are i8 elements 126, 127, -128: 2^(byte - 127) with byte = element mod 256.
      const scale = (element: number) => 2 ** ((element < 0 ? element + 256 : element) - 127);
      const expected: number[] = [];
      const rows = x.length / 64;
      expect(rows).toBe(10);
      for (let i = 0; i < rows; i++) {
        for (let j = 0; j < 5; j++) {
          let sum = 0;
          for (let k = 0; k < 64; k++) {
            const b = transposed ? (w[j * 64 + k] as number) : (w[k * 5 + j] as number);
            sum +=
              (x[i * 64 + k] as number) *
              scale(sx[i * 2 + Math.floor(k / 32)] as number) *
              b *
              scale(sw[j * 2 + Math.floor(k / 32)] as number);
          }
          expected.push(sum);
        }
      }
      const outputs = evaluate(p);
      expect([...(outputs.at(-1)?.data ?? [])]).toEqual(expected);
      expect((await check(p)).failure).toBeNull();
    },
    120_000,
  );
});

describe("nvfp4 tl.dotScaled in the differential tester (kind 30)", () => {
  // a = 11: e2m1 x e2m1 (11 mod 3 = 2, floor(11 / 3) mod 3 = 0) and floor(11 / 9) odd: nvfp4,
  // f8e4m3 scales per 16 along K ([rows, K/16], [N, K/16]) multiplying as plain values.
  it.each([false, true])(
    "a = 11, weight transposed %s: the kernel, a hand loop and the machine agree",
    async (transposed) => {
      const p = program([{ kind: SCALED_KIND, a: 11, b: 1, c: 3, d: transposed ? 1 : 0 }]);
      const step = dotScaledOf(p);
      expect([step.format, step.bFormat, step.scaleDtype]).toEqual(["e2m1", "e2m1", "f8e4m3"]);
      const loads = [step.a, step.aScale, step.b, step.bScale].map((s) => {
        const load = p.steps[s];
        if (load?.kind !== "load") throw new Error("not a load");
        return p.inputs[load.input];
      });
      expect(loads.map((input) => input?.dtype)).toEqual(["f4e2m1", "f8e4m3", "f4e2m1", "f8e4m3"]);
      const [x, sx, w, sw] = loads.map((input) => input?.values ?? []) as [
        number[],
        number[],
        number[],
        number[],
      ];
      expect(sx.length).toBe(10 * 4);
      const expected: number[] = [];
      for (let i = 0; i < 10; i++) {
        for (let j = 0; j < 5; j++) {
          let sum = 0;
          for (let k = 0; k < 64; k++) {
            const b = transposed ? (w[j * 64 + k] as number) : (w[k * 5 + j] as number);
            sum +=
              (x[i * 64 + k] as number) *
              (sx[i * 4 + Math.floor(k / 16)] as number) *
              b *
              (sw[j * 4 + Math.floor(k / 16)] as number);
          }
          expected.push(sum);
        }
      }
      expect([...(evaluate(p).at(-1)?.data ?? [])]).toEqual(expected);
      expect((await check(p)).failure).toBeNull();
    },
    120_000,
  );
});
