import { readmeExample } from "@kb/tooling/readme-example";
import { encodeAddress } from "@kb/topology";
import { describe, expect, it } from "vitest";
import { commandList, type TL } from "./index.js";

// The example of packages/tl/README.md, run as written: `console` is a local that collects what
// the example prints, and the last test checks the code below still is the README's.
describe("README example", () => {
  it("lists the commands of a K-looped GEMM with a relu", async () => {
    const printed: unknown[] = [];
    const console = { log: (value: unknown) => printed.push(value) };
    // README example start

    const hbm = (offset: number) => encodeAddress({ sip: 0, cube: 0, space: "hbm", offset });

    // C[128 x 64] = relu(A[128 x 256] @ B[256 x 64]), one 64-wide K step at a time.
    async function gemmRelu(tl: TL, a: number, b: number, c: number) {
      let acc = tl.zeros([128, 64], "f32");
      for (let k = 0; k < 256; k += 64) {
        const mark = tl.scratchMark();
        const at = await tl.load(a + k * 2, [128, 64], "f16", { stride: 256 }); // a block of A
        const bt = await tl.load(b + k * 64 * 2, [64, 64], "f16");
        acc = await tl.dot(at, bt, acc); // accumulates in f32
        tl.scratchRelease(mark); // the A and B tiles' TCM is free again
      }
      const out = await (await tl.relu(acc)).to("f16");
      await tl.store(c, out);
    }

    // Command-list mode: the commands the kernel issues, without simulating anything.
    const commands = await commandList(gemmRelu, [hbm(0), hbm(65536), hbm(131072)], {
      kernel: "gemmRelu",
      placement: {
        pe: "sip0.cube0.pe0",
        sip: 0,
        cube: 0,
        peIndex: 0,
        programId: [0, 0, 0],
        numPrograms: [1, 1, 1],
      },
      scratch: { offset: 2 ** 20, bytes: 2 ** 20 },
    });
    console.log(commands.map((command) => (command.kind === "math" ? command.op : command.kind)).join(" "));
    // dma dma gemm dma dma gemm dma dma gemm dma dma gemm relu cast dma

    // README example end
    expect(printed).toEqual(["dma dma gemm dma dma gemm dma dma gemm dma dma gemm relu cast dma"]);
  });

  it("is the code of the README", () => {
    const { readme, test } = readmeExample(new URL("../README.md", import.meta.url), import.meta.url);
    expect(test).toBe(readme);
  });
});
