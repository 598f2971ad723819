import { parseBenchParams } from "@kb/runtime";
import { describe, expect, test } from "vitest";
import backward from "../06-fused-attention-backward.js";
import { runTutorial } from "./run-tutorial.js";

/** The tutorial through the runtime API, phase 2 and the load comparison included (run-tutorial.ts). */
const run = (params: Record<string, unknown>, topologyName = "default") =>
  runTutorial(backward, params, topologyName);

// 2 heads of 256 x 32. Forward: 64 query rows per program, 32 keys a step (causal: query block m
// runs 2 (m + 1) steps). Backward: PRE_BLOCK 64; dK, dV per 64 keys (BLOCK_N1) in steps of 16
// query rows (8 on the diagonal), dQ per 64 query rows (BLOCK_M2) in steps of 16 keys (8 on the
// diagonal): 4 programs a head.
const SMALL = {
  Z: 1,
  H: 2,
  N_CTX: 256,
  HEAD_DIM: 32,
  BLOCK_M: 64,
  BLOCK_N: 32,
  PRE_BLOCK: 64,
  BLOCK_M1: 16,
  BLOCK_N1: 64,
  BLOCK_M2: 64,
  BLOCK_N2: 16,
  BLK_SLICE_FACTOR: 2,
};
const HEADS = 2;
const PIDS = [0, 1, 2, 3];
const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);
// Forward, per head: steps 2 + 4 + 6 + 8 = 20, two dots and two loads (K, V) each, one Q load a program.
const FWD = { dots: HEADS * 20 * 2, loads: HEADS * (4 + 20 * 2) };
// Backward program pid: dK, dV over 8 diagonal slices of 8 query rows and (256 - 64 (pid + 1)) / 16
// = 12 - 4 pid blocks of 16 below, 4 dots a step (k qT, pT dO, v dOT, dsT q) and loads of q, dO
// (and m, Di), after loading k and v; dQ over 8 diagonal slices of 8 keys and 64 pid / 16 = 4 pid
// blocks of 16 left of the diagonal, 3 dots a step (q kT, dO vT, ds k) and loads of k, v, after q
// and dO (and m, Di). Phase 1 observes the loads of bytes the host wrote (Q, K, V, dO, arg_k);
// M and Delta are compute results of the earlier launches, pending in phase 1, so their loads
// are replayed by phase 2 and not compared.
const BWD = {
  dots: HEADS * sum(PIDS.map((pid) => 4 * (8 + 12 - 4 * pid) + 3 * (8 + 4 * pid))),
  loads: HEADS * sum(PIDS.map((pid) => 2 + 2 * (8 + 12 - 4 * pid) + 2 + 2 * (8 + 4 * pid))),
};
// Preprocess: 4 programs a head, each loading its 64 rows of Out (pending: the forward's) and dOut.
const PRE_LOADS = HEADS * 4;

describe("tutorial 06 backward: dQ, dK, dV of causal attention", { timeout: 120_000 }, () => {
  test("the work, counted by hand: 104 - 4 pid dots and 60 observed loads per backward program", () => {
    expect(FWD).toEqual({ dots: 80, loads: 88 });
    expect(BWD).toEqual({ dots: 2 * (104 + 100 + 96 + 92), loads: 2 * 4 * 60 });
  });

  test.each([
    ["f32", "default"],
    ["f16", "ref-cube"],
    ["bf16", "default"],
    ["bf16", "ref-cube"],
  ] as const)(
    "%s on %s.yaml: dQ, dK, dV PASS phase 2 against the host's gradients, and phase 1 observed every load as phase 2 copied it",
    async (dtype, name) => {
      const { outputs, phases, dots } = await run({ ...SMALL, dtype }, name);
      expect(outputs).toEqual([
        ["dK", true, 0],
        ["dQ", true, 0],
        ["dV", true, 0],
      ]);
      expect(dots).toBe(FWD.dots + BWD.dots);
      const loads = FWD.loads + PRE_LOADS + BWD.loads;
      expect(phases).toMatchObject({ observed: loads, compared: loads, differing: 0, unmatched: 0 });
    },
  );

  test("block sizes Triton's kernel cannot run are a bad param naming each rule they break", () => {
    const error = (() => {
      try {
        parseBenchParams(backward, { ...SMALL, BLOCK_M2: 32 });
      } catch (thrown) {
        return thrown as { code: string; message: string };
      }
      return null;
    })();
    expect(error?.code).toBe("RUNTIME_INVALID");
    expect(error?.message).toContain(
      "(params): the blocks need BLOCK_N1 (64) equal to BLOCK_M2 (32), as in Triton's tutorial",
    );
  });
});
