import { Tensor } from "@kb/tensor";
import { describe, expect, it } from "vitest";
import type { TLContext } from "./context.js";
import type { LoadFuture, TensorHandle } from "./handles.js";
import type { LoadObservation } from "./kernel-memory.js";
import {
  endNs,
  failure,
  hbmAt as hbm,
  listCommands as list,
  machineOf,
  runKernel,
  scratchAt as scratch,
  TestMemory,
} from "./test-support.js";

/** Memory holding 1 .. 4 (f32) at HBM 0 and 5 .. 8 at HBM 4096; records the loads observed. */
class Values extends TestMemory {
  readonly observed: LoadObservation[] = [];
  constructor() {
    super();
    this.write(hbm(0), Tensor.fromArray([1, 2, 3, 4], [4], "f32").bytes);
    this.write(hbm(4096), Tensor.fromArray([5, 6, 7, 8], [4], "f32").bytes);
  }
  observeLoad(load: LoadObservation): void {
    this.observed.push(load);
  }
}

/** The elements of a handle's data. */
const valuesOf = (handle: TensorHandle) => Array.from(handle.data.toFloat64Array());

describe("tl.loadAsync", () => {
  it("issues the load as an async DMA; tl.wait(future) waits for its position and gives the handle", async () => {
    let loaded: TensorHandle | null = null;
    const commands = await list(async (tl) => {
      const future = await tl.loadAsync(hbm(0), [4, 8], "f16", { stride: 64 });
      expect(String(future)).toBe("LoadFuture(#0 f16 [4, 8])");
      loaded = await tl.wait(future);
    });
    expect(commands).toEqual([
      {
        kind: "dma",
        src: hbm(0),
        dst: scratch(0),
        bytes: 16,
        rows: 4,
        srcStride: 128,
        dstStride: 16,
        async: true,
      },
      { kind: "wait", commands: [0] },
    ]);
    expect((loaded as TensorHandle | null)?.describe()).toBe("handle #0 (f16 [4, 8] in tcm)");
  });

  it("gives the loaded values once waited, observed for --check-phases like a load", async () => {
    const memory = new Values();
    const seen: number[][] = [];
    await endNs(async (tl) => {
      const x = await tl.loadAsync(hbm(0), [4], "f32");
      const y = await tl.loadAsync(hbm(4096), [4], "f32");
      seen.push(valuesOf(await tl.wait(y)), valuesOf(await tl.wait(x)));
    }, memory);
    expect(seen).toEqual([
      [5, 6, 7, 8],
      [1, 2, 3, 4],
    ]);
    // In the order they were waited for, each at its wait's time, named by its loadAsync line.
    expect(memory.observed.map((o) => o.src)).toEqual([hbm(4096), hbm(0)]);
    expect(memory.observed[0]?.site).toMatch(/load-async\.test\.ts:\d+:\d+$/);
  });

  // Hand-computed on the schema's default machine (pe_cpu dispatch_ns 2, pe_mmu miss 50 / hit 1,
  // pe_gemm_v1 32 x 32 MACs + 8 cycles at 1 GHz). A 128 x 128 f16 load (32 KiB) takes
  // 2 (dispatch) + 50 (TLB miss) + F (fabric) the first time and 2 + 1 + F after (same page); the
  // dot of two such tiles 2 + (4 x 4 x 128 + 8) = 2 + 2056 ns. F is measured by the first case.
  it("runs the copy while the kernel computes: a dot hides a load issued before it", async () => {
    const tile = [128, 128];
    const first = await endNs(async (tl) => {
      await tl.load(hbm(0), tile, "f16");
    });
    const fabric = first - 2 - 50;
    expect(fabric).toBeGreaterThan(0);
    const serial = await endNs(async (tl) => {
      const a = await tl.load(hbm(0), tile, "f16");
      await tl.load(hbm(65536), tile, "f16");
      await tl.dot(a, a);
    });
    // load, load, dot one after the other: first + (3 + F) + 2316, the dot being 2 + its fetch
    // (65536 B through PE_TCM: 129 ns) + 2056 + its f32 store (129 ns). F includes the load's
    // PE_TCM write.
    expect(serial).toBeCloseTo(first + (3 + fabric) + 2316, 6);
    const pipelined = await endNs(async (tl) => {
      const a = await tl.load(hbm(0), tile, "f16");
      const next = await tl.loadAsync(hbm(65536), tile, "f16");
      await tl.dot(a, a);
      await tl.wait(next);
    });
    // The second copy (3 + F, about 300 ns) runs under the dot (2058 ns): only its dispatch shows.
    expect(pipelined).toBeCloseTo(first + 2 + 2316, 6);
    // Waiting at once gives the serial time back.
    const waitedAtOnce = await endNs(async (tl) => {
      const a = await tl.load(hbm(0), tile, "f16");
      await tl.wait(await tl.loadAsync(hbm(65536), tile, "f16"));
      await tl.dot(a, a);
    });
    expect(waitedAtOnce).toBeCloseTo(serial, 6);
  });

  it("the destination may not be used before tl.wait: its handle, views of it, its data", async () => {
    const messages: string[] = [];
    const error = await failure(
      list(async (tl) => {
        const buffer = tl.empty([2, 4], "f32");
        await tl.loadAsync(hbm(0), [2, 4], "f32", { out: buffer });
        messages.push((await failure((async () => tl.view(buffer, 4, [4]))())).message);
        await tl.exp(buffer);
      }),
    );
    expect(error.code).toBe("TL_INVALID_CALL");
    expect(error.message).toMatch(/load-async\.test\.ts:\d+:\d+ kernel k on sip0\.cube0\.pe0/);
    expect(error.message).toContain(
      "tl.exp: handle #0 (f32 [2, 4] in tcm) overlaps the TCM destination of LoadFuture(#0 f32 [2, 4])",
    );
    expect(error.message).toContain("still in flight: wait for the load first");
    expect(messages[0]).toContain("tl.view: handle #0 (f32 [2, 4] in tcm) overlaps");
    // Runner mode: reading its data is refused too; a handle elsewhere in TCM is free to use.
    const data = await failure(
      endNs(async (tl) => {
        const other = await tl.load(hbm(4096), [4], "f32");
        const buffer = tl.empty([4], "f32");
        await tl.loadAsync(hbm(0), [4], "f32", { out: buffer });
        await tl.exp(other);
        buffer.data;
      }, new Values()),
    );
    expect(data.message).toContain("handle #1 (f32 [4] in tcm).data overlaps the TCM destination");
  });

  it("waited twice, or from another kernel instance: TL_INVALID_CALL at the wait", async () => {
    const twice = await failure(
      list(async (tl) => {
        const future = await tl.loadAsync(hbm(0), [4], "f32");
        await tl.wait(future);
        await tl.wait(future);
      }),
    );
    expect(twice.message).toContain("tl.wait: LoadFuture(#0 f32 [4]) was already waited for.");
    let stolen: LoadFuture | null = null;
    await list(async (tl) => {
      stolen = await tl.loadAsync(hbm(0), [4], "f32");
    });
    const other = await failure(list(async (tl) => void (await tl.wait(stolen as unknown as LoadFuture))));
    expect(other.message).toContain("tl.wait: LoadFuture(#0 f32 [4]) belongs to another kernel instance.");
  });

  it("tl.wait() completes outstanding loads; tl.wait(future) then gives the handle without a command", async () => {
    const seen: number[] = [];
    const commands: string[] = [];
    const memory = new Values();
    const { commands: issued } = await runKernel(
      machineOf(),
      async (tl: TLContext) => {
        const future = await tl.loadAsync(hbm(4096), [4], "f32");
        await tl.wait();
        seen.push(...valuesOf(await tl.wait(future)));
      },
      [],
      { memory },
    );
    commands.push(...issued.map((c) => c.kind));
    expect(seen).toEqual([5, 6, 7, 8]);
    expect(commands).toEqual(["dma", "wait"]);
    expect(memory.observed).toHaveLength(1);
  });

  it("a load never waited for: the kernel's end waits for its copy (as for composites)", async () => {
    const first = await endNs(async (tl) => {
      await tl.load(hbm(0), [128, 128], "f16");
    });
    const unwaited = await endNs(async (tl) => {
      await tl.loadAsync(hbm(0), [128, 128], "f16");
    });
    // The same copy; the program's end waits for it instead of the kernel.
    expect(unwaited).toBeCloseTo(first, 6);
  });

  it("releasing the destination's scratch while the load is in flight fails at the wait", async () => {
    const error = await failure(
      endNs(async (tl) => {
        const mark = tl.scratchMark();
        const future = await tl.loadAsync(hbm(0), [4], "f32");
        tl.scratchRelease(mark);
        await tl.wait(future);
      }, new Values()),
    );
    expect(error.message).toContain(
      "tl.wait: the TCM destination of LoadFuture(#0 f32 [4]) (", // then its loadAsync site
    );
    expect(error.message).toContain("was released by tl.scratchRelease while the load was in flight");
  });
});

describe("typed pointers (a device tensor with a dtype) in command-list mode too", () => {
  const C = { address: hbm(0), dtype: "f16" as const, describe: () => "C (f16 [8, 8] at 0x0)" };

  it("a store of another element type is refused, naming both dtypes and tl.cast", async () => {
    const error = await failure(
      list(async (tl) => {
        const acc = tl.zeros([8, 8], "f32");
        await tl.store(C, acc);
      }),
    );
    expect(error.code).toBe("TL_INVALID_CALL");
    expect(error.message).toContain(
      "tl.store of handle #0 (f32 [8, 8] in tcm) from tl.zeros into C (f16 [8, 8] at 0x0)",
    );
    expect(error.message).toContain('await tl.cast(x, "f16")');
  });

  it("a load or loadAsync of another element type is refused; the pointer's own type and raw addresses pass", async () => {
    const load = await failure(list(async (tl) => void (await tl.load(C, [8, 8], "f32"))));
    expect(load.message).toContain("tl.load of f32 elements from C (f16 [8, 8] at 0x0)");
    const loadAsync = await failure(list(async (tl) => void (await tl.loadAsync(C, [8, 8], "bf16"))));
    expect(loadAsync.message).toContain("tl.loadAsync of bf16 elements from C (f16 [8, 8] at 0x0)");
    const commands = await list(async (tl) => {
      await tl.store(C, await tl.load(C, [8, 8], "f16"));
      await tl.store(C.address, tl.zeros([8, 8], "f32")); // a number carries no type
    });
    expect(commands.map((c) => c.kind)).toEqual(["dma", "dma", "math", "dma"]);
  });
});
