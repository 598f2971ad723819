import { MATH_OPS, type MathCommand, type MathOpInfo, PUBLIC_MATH_OPS } from "@kb/spec";
import { DTYPE_BYTES } from "@kb/tensor";
import { encodeAddress, tcmAddress } from "@kb/topology";
import { describe, expect, it } from "vitest";
import { commandList } from "./command-list.js";
import { computeCalls } from "./compute-calls.js";
import { TLContext } from "./context.js";
import { controlCalls } from "./control-calls.js";
import type { TensorHandle } from "./handles.js";
import { ipcqCalls } from "./ipcq-calls.js";
import { MATH_CALLS_TYPED, mathCalls } from "./math-calls.js";
import { metadataCalls } from "./metadata-calls.js";
import { movementCalls } from "./movement-calls.js";
import { SCRATCH_ALIGN } from "./scratch.js";
import { failure, machineOf, placementOf, runKernel } from "./test-support.js";

const hbm = (offset: number) => encodeAddress({ sip: 0, cube: 0, space: "hbm", offset });
/** Scratch of the test kernels: PE0's TCM from 1 MiB. */
const scratch = (offset: number) => tcmAddress(0, 0, 0, 2 ** 20 + offset);
const list = (kernel: (tl: TLContext) => Promise<void>) =>
  commandList(kernel, [], {
    kernel: "k",
    placement: placementOf(),
    scratch: { offset: 2 ** 20, bytes: 2 ** 20 },
  });

const FAMILIES = { metadataCalls, movementCalls, computeCalls, mathCalls, ipcqCalls, controlCalls };

describe("the calls of tl, by family", () => {
  it("has a method for every public op of the table and none for the internal ops", () => {
    expect(MATH_CALLS_TYPED).toBe(true);
    expect(Object.keys(mathCalls)).toEqual([...PUBLIC_MATH_OPS]);
    for (const op of PUBLIC_MATH_OPS) {
      expect(typeof (TLContext.prototype as unknown as Record<string, unknown>)[op], op).toBe("function");
    }
    for (const internal of ["fill", "iota", "copy", "transpose"])
      expect(internal in TLContext.prototype).toBe(false);
  });

  it("installs each family's calls as methods of the class: not enumerable, no name twice", () => {
    const names = Object.values(FAMILIES).flatMap((family) => Object.keys(family));
    expect(new Set(names).size).toBe(names.length);
    const own = ["constructor", "_completionId", "_error", "_valuesOf", "_endError", "_call", "noteFailure"];
    expect(names.filter((name) => own.includes(name))).toEqual([]);
    for (const name of names) {
      const descriptor = Object.getOwnPropertyDescriptor(TLContext.prototype, name);
      expect(descriptor?.enumerable, name).toBe(false);
    }
    expect(Object.keys(TLContext.prototype)).toEqual([]);
    // A getter stays a getter.
    expect(typeof Object.getOwnPropertyDescriptor(TLContext.prototype, "scratchUsage")?.get).toBe("function");
  });
});

describe("a math call takes its arguments in the order of the op's entry", () => {
  // Operands x, y, z (f32 [2, 4], 32 B each at scratch 0, 32, 64), then the op's params, target
  // dtype and axis; the result lands at scratch 96.
  // The scalar operand: 0.5, or 3 for an op of integer operands only (a Philox seed is an integer).
  const scalarOf = (info: MathOpInfo) =>
    info.inputDtypes?.every((dtype) => dtype === "i8" || dtype === "i32" || dtype === "u32") ? 3 : 0.5;
  const argumentsOf = (info: MathOpInfo, tensors: readonly TensorHandle[], scalarLast: boolean) => [
    ...tensors.slice(0, info.arity - (scalarLast ? 1 : 0)),
    ...(scalarLast ? [scalarOf(info)] : []),
    ...info.params.map((_, i) => i - 1), // lo = -1, hi = 0
    ...(info.target ? ["f16"] : []),
    ...(info.shape === "elementwise" ? [] : [0]),
  ];

  for (const op of PUBLIC_MATH_OPS) {
    const info = MATH_OPS[op] as MathOpInfo;
    // f32 operands, or the first dtype the op takes (i1 for the logic ops: 8 B, a 16 B slot each).
    const dtype = info.inputDtypes?.[0] ?? "f32";
    const slot = Math.ceil((8 * DTYPE_BYTES[dtype]) / SCRATCH_ALIGN) * SCRATCH_ALIGN;
    const outDtype = info.dtype([dtype, dtype, dtype].slice(0, info.arity), info.target ? "f16" : undefined);
    for (const scalarLast of info.scalar ? [false, true] : [false]) {
      it(`${op}${scalarLast ? " with a scalar" : ""}`, async () => {
        const commands = await list(async (tl) => {
          const tensors = [
            await tl.load(hbm(0), [2, 4], dtype),
            await tl.load(hbm(64), [2, 4], dtype),
            await tl.load(hbm(128), [2, 4], dtype),
          ];
          const call = (tl as unknown as Record<string, (...args: unknown[]) => Promise<TensorHandle>>)[op];
          await call?.apply(tl, argumentsOf(info, tensors, scalarLast));
        });
        const tensors = info.arity - (scalarLast ? 1 : 0);
        const scalars = [...(scalarLast ? [scalarOf(info)] : []), ...info.params.map((_, i) => i - 1)];
        const expected: MathCommand = {
          kind: "math",
          op,
          inputs: [scratch(0), scratch(slot), scratch(2 * slot)].slice(0, tensors),
          shape: [2, 4],
          out: scratch(3 * slot),
          dtype: outDtype,
          ...(info.shape === "elementwise" ? {} : { axis: 0 }),
          ...(scalars.length > 0 ? { scalars } : {}),
          ...(outDtype !== dtype ? { inputDtype: dtype } : {}),
        };
        expect(commands.slice(3)).toEqual([expected]);
      });
    }
  }
});

describe("math calls refuse bad arguments", () => {
  it("when the call is made: a scalar that is not finite, clamp bounds, where's dtypes, cast's dtype", async () => {
    const messages: string[] = [];
    await list(async (tl) => {
      const x = await tl.load(hbm(0), [4], "f32");
      const i = await tl.load(hbm(64), [4], "i32");
      const calls = [
        () => tl.add(x, Number.POSITIVE_INFINITY),
        () => tl.clamp(x, 1, 0),
        () => tl.where(i, x, x),
        () => tl.cast(x, "f64" as "f32"),
      ];
      for (const call of calls) {
        try {
          call();
        } catch (error) {
          messages.push((error as Error).message);
        }
      }
    });
    expect(messages).toEqual([
      expect.stringContaining("tl.add: scalar must be finite, got Infinity."),
      expect.stringContaining("tl.clamp: needs lo <= hi, got 1 and 0."),
      expect.stringContaining(
        "tl.where: cond must be i1 (a comparison's result) or of the values' dtype, and a and b must share a dtype; got i32, f32, f32.",
      ),
      expect.stringContaining('tl.cast: unknown dtype "f64"'),
    ]);
  });

  it("errors inside a math call name the kernel's line", async () => {
    const error = await failure(
      runKernel(machineOf(), async function expOfRef(tl: TLContext) {
        await tl.exp(tl.ref(hbm(0), [4], "f32"));
      }),
    );
    expect(error.code).toBe("TL_INVALID_CALL");
    expect(error.message).toContain(
      "tl.exp: handle #0 (f32 [4] in hbm) from tl.ref is not in TCM; tl.load it first.",
    );
    expect(error.context).toMatchObject({ file: "packages/tl/src/math-calls.test.ts", kernel: "expOfRef" });
  });
});
