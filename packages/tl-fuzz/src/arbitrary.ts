import * as fc from "fast-check";
import { type RawProgram, type RawStep, STEP_KINDS } from "./build.js";

/** One step's raw choices. Shrinks toward 0: the simplest op of each kind on the first value. */
export const rawStep: fc.Arbitrary<RawStep> = fc.record({
  kind: fc.nat(STEP_KINDS - 1),
  a: fc.nat(999),
  b: fc.nat(999),
  c: fc.nat(999),
  d: fc.nat(999),
});

/**
 * Raw programs: up to `maxSteps` steps over tensors of 1 to 40 rows, blocks of any size, 1 to 4
 * PEs (persistent) or one PE per block; one program in eight has NaN, infinities and -0 among
 * its inputs. Shrinking removes steps and lowers every number, and every shrunk value is still a
 * program (`buildProgram`).
 */
export function rawProgram(maxSteps = 10): fc.Arbitrary<RawProgram> {
  return fc.record({
    seed: fc.nat(1_000_000),
    rows: fc.nat(39),
    blockRows: fc.nat(39),
    pes: fc.nat(3),
    persistent: fc.boolean(),
    special: fc.nat(7).map((n) => n === 7),
    steps: fc.array(rawStep, { minLength: 1, maxLength: maxSteps }),
  });
}
