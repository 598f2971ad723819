import { readmeExample } from "@kb/tooling/readme-example";
import { describe, expect, it } from "vitest";
import {
  DTYPE_BYTES,
  dtypeSchema,
  evaluateMath,
  hbmTopologyParams,
  MATH_OPS,
  mathOutputShape,
  type PeCommand,
} from "./index.js";

// The example of packages/spec/README.md, run as written: `console` is a local that collects what
// the example prints, and the last test checks the code below still is the README's.
describe("README example", () => {
  it("builds a PE program, reads the op table, evaluates an op, parses dtypes and HBM params", () => {
    const printed: unknown[][] = [];
    const console = { log: (...values: unknown[]) => printed.push(values) };
    // README example start
    // A PE program is plain data: a DMA into TCM, then a row softmax there.
    const program: PeCommand[] = [
      { kind: "dma", src: 0x1000, dst: 0x2000, bytes: 4 * 8 * DTYPE_BYTES.f32 },
      { kind: "math", op: "softmax", inputs: [0x2000], out: 0x2000, shape: [4, 8], dtype: "f32" },
    ];
    console.log(program.map((command) => command.kind).join(" -> ")); // dma -> math

    // The math op table: arity, shape rule and PE_MATH cycles per element of each op.
    const sum = MATH_OPS.sum;
    console.log(sum?.arity, sum?.shape, sum?.cycles); // 1 reduce 1
    console.log(sum && mathOutputShape(sum, [4, 8], 1)); // [ 4, 1 ] (the reduced axis kept, as size 1)

    // The scalar (f64) evaluation both phases share: x + 0.5 over a [2, 2] operand.
    const x = { values: Float64Array.from([1, 2, 3, 4]), shape: [2, 2] };
    console.log([...evaluateMath("add", [x], [2, 2], null, { scalars: [0.5] })]); // [ 1.5, 2.5, 3.5, 4.5 ]

    // dtypes are validated with the same schema the op log uses.
    console.log(dtypeSchema.safeParse("bf16").success, dtypeSchema.safeParse("f64").success); // true false

    // An HBM model's params: what the topology gives every controller, plus the model's own.
    const params = hbmTopologyParams.parse({
      channels: 8,
      pseudo_channels: 2,
      pc_bw_gbs: 32,
      access_latency_ns: 40,
      interleave_bytes: 256,
      flit_bytes: 64,
      capacity_bytes: 2 ** 34,
    });
    console.log(params.row_bytes, params.queue_depth); // 1024 64
    // README example end
    expect(printed).toEqual([
      ["dma -> math"],
      [1, "reduce", 1],
      [[4, 1]],
      [[1.5, 2.5, 3.5, 4.5]],
      [true, false],
      [1024, 64],
    ]);
  });

  it("is the code of the README", () => {
    const { readme, test } = readmeExample(new URL("../README.md", import.meta.url), import.meta.url);
    expect(test).toBe(readme);
  });
});
