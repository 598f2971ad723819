import type { DmaCommand, PeCommand } from "@kb/spec";
import { Tensor } from "@kb/tensor";
import { describe, expect, it } from "vitest";
import type { TLContext } from "./context.js";
import { failure, hbmAt, listCommands, machineOf, runKernel, TestMemory } from "./test-support.js";

const hbm = hbmAt;

function memoryWith(values: number[], at: number, dtype: "f32" | "i32" = "f32", memory = new TestMemory()) {
  memory.write(hbm(at), Tensor.fromArray(values, [values.length], dtype).bytes);
  return memory;
}

const dmas = (commands: PeCommand[]) => commands.filter((c): c is DmaCommand => c.kind === "dma");
const numbers = (t: Tensor) => [...t.toFloat64Array()];

describe("tl.load through offsets (a gather)", () => {
  it("reads element i at base + offsets[i]; 8 offsets forming 3 runs are one DMA of 3 runs", async () => {
    // f32 at HBM 0: value 10 * k at element k.
    const memory = memoryWith(
      Array.from({ length: 64 }, (_, k) => 10 * k),
      0,
    );
    let got: number[] = [];
    const { commands } = await runKernel(
      machineOf(),
      async (tl: TLContext) => {
        // [4, 5, 6, 20, 21, 40, 41, 42]: runs 4..6, 20..21, 40..42.
        const offs = await tl.add(
          tl.arange(0, 8),
          await tl.where(
            await tl.lt(tl.arange(0, 8), 3),
            tl.full([8], 4, "i32"),
            await tl.where(await tl.lt(tl.arange(0, 8), 5), tl.full([8], 17, "i32"), tl.full([8], 35, "i32")),
          ),
        );
        got = numbers((await tl.load(hbm(0), [8], "f32", { offsets: offs })).data);
      },
      [],
      { memory },
    );
    expect(got).toEqual([40, 50, 60, 200, 210, 400, 410, 420]);
    const [load] = dmas(commands);
    expect(load?.src).toBe(hbm(0));
    // [srcOffset (device), dstOffset (tile), bytes] per run.
    expect(load?.indexed).toEqual({ runs: [16, 0, 12, 80, 12, 8, 160, 20, 12] });
    expect(load?.bytes).toBe(32);
  });

  it("offsets computed from loaded ids (an embedding lookup) are known in phase 1", async () => {
    // A table of 4 rows of 3 f32 at HBM 0 (row r holds 100r, 100r + 1, 100r + 2); ids at 4096.
    const memory = memoryWith(
      Array.from({ length: 12 }, (_, k) => 100 * Math.floor(k / 3) + (k % 3)),
      0,
    );
    memoryWith([3, 1, 7], 4096, "i32", memory);
    let got: number[] = [];
    await runKernel(
      machineOf(),
      async (tl: TLContext) => {
        const ids = await tl.load(hbm(4096), [3, 1], "i32");
        // offs = min(ids, 3) * 3 + cols: [3, 3] through broadcasting; the id 7 is clamped to row 3.
        const rows = await tl.minimum(ids, 3);
        const offs = await tl.add(await tl.mul(rows, 3), tl.reshape(tl.arange(0, 3), [1, 3]));
        got = numbers((await tl.load(hbm(0), [3, 3], "f32", { offsets: offs })).data);
      },
      [],
      { memory },
    );
    expect(got).toEqual([300, 301, 302, 100, 101, 102, 300, 301, 302]);
  });

  it("masked-off elements hold other and move nothing; their offsets are not checked", async () => {
    const memory = memoryWith([1, 2, 3, 4], 0);
    let got: number[] = [];
    const { commands } = await runKernel(
      machineOf(),
      async (tl: TLContext) => {
        const i = tl.arange(0, 4);
        const offs = await tl.sub(3, i); // [3, 2, 1, 0]
        const mask = await tl.ne(i, 1);
        got = numbers((await tl.load(hbm(0), [4], "f32", { offsets: offs, mask, other: -1 })).data);
      },
      [],
      { memory },
    );
    expect(got).toEqual([4, -1, 2, 1]);
    expect(dmas(commands)[0]?.indexed).toEqual({
      runs: [12, 0, 4, 4, 8, 4, 0, 12, 4],
      fill: [...Tensor.fromArray([-1], [1], "f32").bytes],
    });
  });

  it("tl.loadAsync gathers too: the tile lands when tl.wait covers it", async () => {
    const memory = memoryWith([1, 2, 3, 4], 0);
    let got: number[] = [];
    await runKernel(
      machineOf(),
      async (tl: TLContext) => {
        const future = await tl.loadAsync(hbm(0), [4], "f32", { offsets: await tl.sub(3, tl.arange(0, 4)) });
        got = numbers((await tl.wait(future)).data);
      },
      [],
      { memory },
    );
    expect(got).toEqual([4, 3, 2, 1]);
  });

  it("consecutive offsets covering the whole tile are a plain copy from there", async () => {
    const commands = await listCommands(async (tl) => {
      await tl.load(hbm(0), [4], "f32", { offsets: await tl.add(tl.arange(0, 4), 6) });
    });
    const [load] = dmas(commands);
    expect(load).toMatchObject({ src: hbm(24), bytes: 16 });
    expect(load?.indexed).toBeUndefined();
  });

  it("offsets from a pending float result are a located TL_INVALID_CALL saying phase 1 cannot know them", async () => {
    const memory = memoryWith([1, 2, 3, 4], 0);
    const e = await failure(
      runKernel(
        machineOf(),
        async (tl: TLContext) => {
          const x = await tl.load(hbm(0), [4], "f32");
          const offs = await tl.cast(await tl.mul(x, 2), "i32"); // computed from float data: phase 2 only
          await tl.load(hbm(0), [4], "f32", { offsets: offs });
        },
        [],
        { memory },
      ),
    );
    expect(e.code).toBe("TL_INVALID_CALL");
    expect(e.message).toMatch(
      /gather\.test\.ts:\d+:\d+ kernel .*: tl\.load: the offsets .*i32 \[4\].* from tl\.cast are not known in phase 1/,
    );
  });

  it("command-list mode refuses offsets from loaded data, saying to run on a machine", async () => {
    const error = await failure(
      listCommands(async (tl) => {
        const ids = await tl.load(hbm(4096), [4], "i32");
        await tl.load(hbm(0), [4], "f32", { offsets: ids });
      }),
    );
    expect(error.message).toMatch(/command-list mode has no loaded data/);
  });

  it("float offsets and offsets with stride are refused", async () => {
    const floats = await failure(
      listCommands(async (tl) => {
        await tl.load(hbm(0), [4], "f32", { offsets: tl.zeros([4], "f32") });
      }),
    );
    expect(floats.message).toMatch(/offsets must be an integer tile/);
    const strided = await failure(
      listCommands(async (tl) => {
        await tl.load(hbm(0), [2, 2], "f32", { offsets: tl.zeros([2, 2], "i32"), stride: 4 });
      }),
    );
    expect(strided.message).toMatch(/stride and offsets do not go together/);
  });

  it("each run is checked against the allocations, named by its first element and offset", async () => {
    const calls: string[] = [];
    const checked = new (class extends TestMemory {
      override check(_address?: number, _length?: number, what = ""): void {
        if (what.includes("element")) calls.push(what);
      }
    })();
    await runKernel(
      machineOf(),
      async (tl: TLContext) => {
        await tl.load(hbm(0), [2], "f32", { offsets: await tl.mul(tl.arange(0, 2), 7) });
      },
      [],
      { memory: checked },
    );
    expect(calls).toEqual([
      "tl.load of element 0 (offset 0 from 0x0)",
      "tl.load of element 1 (offset 7 from 0x0)",
    ]);
  });
});

describe("tl.store through offsets (a scatter)", () => {
  it("writes element i at base + offsets[i], later elements winning on a repeated offset", async () => {
    const memory = memoryWith([0, 0, 0, 0, 0, 0], 0);
    let got: number[] = [];
    const { commands } = await runKernel(
      machineOf(),
      async (tl: TLContext) => {
        const values = await tl.add(tl.arange(0, 4, "i32"), 1); // [1, 2, 3, 4]
        const x = await tl.cast(values, "f32");
        const offs = await tl.load(hbm(4096), [4], "i32"); // [5, 0, 5, 2]
        await tl.store(hbm(0), x, { offsets: offs });
        got = numbers((await tl.load(hbm(0), [6], "f32")).data);
      },
      [],
      { memory: memoryWith([5, 0, 5, 2], 4096, "i32", memory) },
    );
    expect(got).toEqual([2, 0, 4, 0, 0, 3]);
    const store = dmas(commands).find((c) => c.indexed !== undefined);
    // [srcOffset (tile), dstOffset (device), bytes] per element, in element order.
    expect(store?.indexed).toEqual({ runs: [0, 20, 4, 4, 0, 4, 8, 20, 4, 12, 8, 4] });
  });
});
