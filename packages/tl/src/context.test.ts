import { Tensor } from "@kb/tensor";
import { encodeAddress, tcmAddress } from "@kb/topology";
import { describe, expect, it } from "vitest";
import { commandList } from "./command-list.js";
import type { TLContext } from "./context.js";
import { KernelRegistry } from "./registry.js";
import { failure, machineOf, placementOf, runKernel, TestMemory } from "./test-support.js";

const hbm = (offset: number) => encodeAddress({ sip: 0, cube: 0, space: "hbm", offset });
/** Scratch of the test kernels: PE0's TCM from 1 MiB. */
const scratch = (offset: number) => tcmAddress(0, 0, 0, 2 ** 20 + offset);
const list = (kernel: (tl: TLContext) => Promise<void>, dispatchCycles = 0) =>
  commandList(kernel, [], {
    kernel: "k",
    placement: placementOf(),
    scratch: { offset: 2 ** 20, bytes: 2 ** 20 },
    dispatchCycles,
  });

describe("every primitive emits its command (command-list mode)", () => {
  it("load and store: a DMA between HBM and the scratch, strided rows for a block", async () => {
    const commands = await list(async (tl) => {
      const a = await tl.load(hbm(0), [4, 8], "f16", { stride: 64 });
      await tl.store(hbm(4096), a);
    });
    expect(commands).toEqual([
      // 4 rows of 8 f16 = 16 B each, rows 64 elements = 128 B apart in HBM.
      { kind: "dma", src: hbm(0), dst: scratch(0), bytes: 16, rows: 4, srcStride: 128, dstStride: 16 },
      { kind: "dma", src: scratch(0), dst: hbm(4096), bytes: 64, rows: 1, srcStride: 64, dstStride: 64 },
    ]);
  });

  it("dot: a GEMM of (M, K) x (K, N) into f32 scratch; an accumulator adds, a fresh zeros one overwrites", async () => {
    const commands = await list(async (tl) => {
      const a = await tl.load(hbm(0), [16, 32], "bf16"); // scratch 0, 1024 B
      const b = await tl.load(hbm(4096), [32, 8], "bf16"); // scratch 1024, 512 B
      let acc = tl.zeros([16, 8], "f32"); // scratch 1536, 512 B
      acc = await tl.dot(a, b, acc);
      acc = await tl.dot(a, b, { acc });
      await tl.dot(a, tl.trans(tl.trans(b))); // scratch 2048
    });
    const gemm = {
      kind: "gemm",
      a: scratch(0),
      b: scratch(1024),
      m: 16,
      n: 8,
      k: 32,
      dtype: "bf16",
      dtypeAcc: "f32",
      dtypeOut: "f32",
      transposeA: false,
      transposeB: false,
    };
    expect(commands.slice(2)).toEqual([
      { ...gemm, out: scratch(1536), accumulate: false },
      { ...gemm, out: scratch(1536), accumulate: true },
      { ...gemm, out: scratch(2048), accumulate: false },
    ]);
  });

  it("trans marks the GEMM operand transposed; shapes must agree", async () => {
    const commands = await list(async (tl) => {
      const q = await tl.load(hbm(0), [8, 16], "f16");
      const k = await tl.load(hbm(1024), [4, 16], "f16");
      await tl.dot(q, tl.trans(k));
    });
    expect(commands[2]).toMatchObject({
      kind: "gemm",
      m: 8,
      n: 4,
      k: 16,
      transposeB: true,
      transposeA: false,
    });
    const error = await failure(
      list(async (tl) => {
        const q = await tl.load(hbm(0), [8, 16], "f16");
        await tl.dot(q, q);
      }),
    );
    expect(error.code).toBe("TL_INVALID_CALL");
    expect(error.message).toMatch(/tl\.dot: inner dimensions differ: \[8, 16\] x \[8, 16\] \(16 != 8\)/);
  });

  it("math: unary, binary with a tensor or a scalar, fma, clamp, where, cast", async () => {
    const commands = await list(async (tl) => {
      const x = await tl.load(hbm(0), [2, 8], "f32"); // scratch 0, 64 B
      const y = await x.add(x); // 64
      await tl.exp(y); // 128
      await tl.mul(x, 0.5); // 192
      await tl.fma(x, y, x); // 256
      await tl.clamp(x, -1, 1); // 320
      await tl.where(x, x, y); // 384
      await x.to("bf16"); // 448, 32 B
    });
    const base = { kind: "math", shape: [2, 8], dtype: "f32" };
    expect(commands.slice(1)).toEqual([
      { ...base, op: "add", inputs: [scratch(0), scratch(0)], out: scratch(64) },
      { ...base, op: "exp", inputs: [scratch(64)], out: scratch(128) },
      { ...base, op: "mul", inputs: [scratch(0)], out: scratch(192), scalars: [0.5] },
      { ...base, op: "fma", inputs: [scratch(0), scratch(64), scratch(0)], out: scratch(256) },
      { ...base, op: "clamp", inputs: [scratch(0)], out: scratch(320), scalars: [-1, 1] },
      { ...base, op: "where", inputs: [scratch(0), scratch(0), scratch(64)], out: scratch(384) },
      { ...base, op: "cast", inputs: [scratch(0)], out: scratch(448), dtype: "bf16", inputDtype: "f32" },
    ]);
  });

  it("reductions collapse the axis to 1; softmax keeps the shape", async () => {
    const shapes: number[][] = [];
    const commands = await list(async (tl) => {
      const x = await tl.load(hbm(0), [4, 6], "f16");
      shapes.push([...(await tl.sum(x, 1)).shape], [...(await tl.max(x, 0)).shape]);
      shapes.push([...(await tl.min(x, -1)).shape], [...(await tl.softmax(x)).shape]);
    });
    expect(shapes).toEqual([
      [4, 1],
      [1, 6],
      [4, 1],
      [4, 6],
    ]);
    expect(commands.slice(1).map((c) => [c.kind === "math" && c.op, c.kind === "math" && c.axis])).toEqual([
      ["sum", 1],
      ["max", 0],
      ["min", 1],
      ["softmax", 0], // Triton's default axis (softmax(x, dim=None) takes dim 0)
    ]);
  });

  it("composite: an async command with the epilogue; an unknown epilogue op fails at the call", async () => {
    const commands = await list(async (tl) => {
      const a = tl.ref(hbm(0), [256, 128], "f16");
      const b = tl.ref(hbm(65536), [128, 64], "f16");
      const h = await tl.composite("gemm", a, b, {
        outPtr: hbm(131072),
        tileShape: [64, 64, 64],
        epilogue: [{ op: "relu" }, { op: "mul", scalar: 2, scope: "k_tile" }],
      });
      await tl.composite("math", a, null, { outPtr: hbm(2 ** 20), mathOp: "softmax" });
      await tl.wait(h);
      await tl.wait();
    });
    expect(commands).toEqual([
      {
        kind: "composite_gemm",
        a: hbm(0),
        b: hbm(65536),
        c: hbm(131072),
        m: 256,
        n: 64,
        k: 128,
        dtype: "f16",
        tile: { m: 64, n: 64, k: 64 },
        epilogue: [{ op: "relu" }, { op: "mul", scope: "k_tile", scalar: 2 }],
        async: true,
      },
      {
        kind: "composite_math",
        op: "softmax",
        inputs: [hbm(0)],
        out: hbm(2 ** 20),
        rows: 256,
        cols: 128,
        dtype: "f16",
        async: true,
      },
      { kind: "wait", commands: [0] },
      { kind: "wait" },
    ]);
    const error = await failure(
      list(async (tl) => {
        const a = tl.ref(hbm(0), [128, 128], "f16");
        await tl.composite("gemm", a, a, { outPtr: hbm(65536), epilogue: [{ op: "mish" }] });
      }),
    );
    expect(error.message).toMatch(/epilogue\[0\]: unknown op "mish"; elementwise ops: .*relu/);
  });

  it("constants are written to TCM by a fill / iota the first time a command reads them", async () => {
    const commands = await list(async (tl) => {
      const ones = tl.full([4, 4], 1, "f32");
      const idx = tl.arange(3, 7);
      await tl.store(hbm(0), ones);
      await tl.store(hbm(64), ones); // already written: no second fill
      await tl.store(hbm(128), idx);
    });
    expect(commands.map((c) => (c.kind === "math" ? `${c.op}(${c.scalars})` : c.kind))).toEqual([
      "fill(1)",
      "dma",
      "dma",
      "iota(3)",
      "dma",
    ]);
  });

  it("ids, cycles, dispatch overhead and IPCQ calls", async () => {
    const ids: number[] = [];
    const commands = await list(async (tl) => {
      ids.push(tl.programId(0), tl.programId(1), tl.numPrograms(0), tl.numPrograms(1), tl.cdiv(10, 4));
      await tl.cycles(7);
      const x = await tl.load(hbm(0), [8], "f16");
      await tl.send("east", x);
      await tl.recv("west", { shape: [8], dtype: "f16" });
      const future = await tl.recvAsync("north", { shape: [8] });
      await tl.wait(future);
    }, 3);
    expect(ids).toEqual([0, 0, 8, 2, 3]);
    expect(commands.map((c) => c.kind)).toEqual([
      "cycles", // tl.cycles(7) itself
      "cycles", // dispatch, then the load
      "dma",
      "cycles",
      "ipcq_send",
      "cycles",
      "ipcq_recv",
      "cycles",
      "ipcq_recv",
      "cycles",
      "wait",
    ]);
    expect(commands[0]).toEqual({ kind: "cycles", cycles: 7 });
    expect(commands[1]).toEqual({ kind: "cycles", cycles: 3 });
    expect(commands[8]).toMatchObject({ mode: "return_slot", consume: true, async: true });
    expect(commands[10]).toEqual({ kind: "wait", commands: [8] });
  });
  it("out: a load or a math op writes into a TCM handle instead of fresh scratch, in place too", async () => {
    const commands = await list(async (tl) => {
      const acc = tl.zeros([4, 8], "f32"); // scratch 0, 128 B
      const x = tl.zeros([4, 8], "f32"); // scratch 128
      const loaded = await tl.load(hbm(0), [4, 8], "f32", { out: x });
      const sum = await tl.add(acc, loaded, { out: acc });
      const total = await tl.sum(sum, -1); // fresh: scratch 256, 16 B
      await tl.exp(sum, { out: sum });
      await tl.sum(sum, -1, { out: total });
      expect([loaded.address, sum.address, total.address]).toEqual([scratch(128), scratch(0), scratch(256)]);
    });
    const math = { kind: "math", shape: [4, 8], dtype: "f32" };
    expect(commands).toEqual([
      { kind: "dma", src: hbm(0), dst: scratch(128), bytes: 128, rows: 1, srcStride: 128, dstStride: 128 },
      // The zeros accumulator is written once (fill), then added into in place.
      { ...math, op: "fill", inputs: [], out: scratch(0), scalars: [0] },
      { ...math, op: "add", inputs: [scratch(0), scratch(128)], out: scratch(0) },
      { ...math, op: "sum", inputs: [scratch(0)], out: scratch(256), axis: 1 },
      { ...math, op: "exp", inputs: [scratch(0)], out: scratch(0) },
      { ...math, op: "sum", inputs: [scratch(0)], out: scratch(256), axis: 1 },
    ]);
  });

  it("view: a piece of a TCM tensor (same bytes, no command) that loads and math ops can write into", async () => {
    const seen: string[] = [];
    const commands = await list(async (tl) => {
      const buffer = tl.zeros([10], "f32"); // scratch 0, 40 B (48 with alignment)
      const tail = tl.view(buffer, 8, [2]);
      const loaded = await tl.load(hbm(0), [2], "f32", { out: tail });
      await tl.mul(tl.view(buffer, 0, [2, 4]), 2); // scratch 48
      seen.push(tail.address.toString(16), loaded.describe());
      const error = await failure((async () => tl.view(buffer, 9, [2]))());
      seen.push(error.message);
      // An empty buffer is never filled: pieces are written through views.
      const empty = tl.empty([8], "f32"); // scratch 80
      await tl.load(hbm(64), [4], "f32", { out: tl.view(empty, 4, [4]) });
      await tl.exp(tl.view(empty, 4, [4])); // scratch 112
      seen.push((await failure((async () => empty.data)())).message);
    });
    expect(seen[0]).toBe(scratch(32).toString(16));
    expect(seen[1]).toBe("handle #2 (f32 [2] in tcm)");
    expect(seen[2]).toMatch(
      /tl\.view: elements \[9, 11\) are not within handle #0 \(f32 \[10\] in tcm\) \(10 elements\)/,
    );
    expect(seen[3]).toMatch(/from tl\.empty holds no values: write it first/);
    const math = { kind: "math", dtype: "f32" };
    expect(commands).toEqual([
      // Writing part of a zeros tensor writes all of it first, so no later read fills over it.
      { ...math, op: "fill", inputs: [], shape: [10], out: scratch(0), scalars: [0] },
      { kind: "dma", src: hbm(0), dst: scratch(32), bytes: 8, rows: 1, srcStride: 8, dstStride: 8 },
      { ...math, op: "mul", inputs: [scratch(0)], shape: [2, 4], out: scratch(48), scalars: [2] },
      { kind: "dma", src: hbm(64), dst: scratch(96), bytes: 16, rows: 1, srcStride: 16, dstStride: 16 },
      { ...math, op: "exp", inputs: [scratch(96)], shape: [4], out: scratch(112) },
    ]);
  });

  it("out must be this kernel's plain TCM tensor of the result's shape and dtype", async () => {
    const wrongShape = await failure(
      list(async (tl) => {
        const x = await tl.load(hbm(0), [4, 8], "f32");
        await tl.sum(x, -1, { out: x });
      }),
    );
    expect(wrongShape.code).toBe("TL_INVALID_CALL");
    expect(wrongShape.message).toMatch(
      /tl\.sum: out handle #0 \(f32 \[4, 8\] in tcm\) does not match the result \(f32 \[4, 1\]\)/,
    );
    const ref = await failure(
      list(async (tl) => {
        const x = await tl.load(hbm(0), [8], "f32");
        await tl.load(hbm(64), [8], "f32", { out: tl.ref(hbm(128), [8], "f32") });
        await tl.exp(x);
      }),
    );
    expect(ref.message).toMatch(
      /tl\.load: out handle #1 \(f32 \[8\] in hbm\) from tl\.ref must be a plain TCM tensor/,
    );
    const released = await failure(
      list(async (tl) => {
        const mark = tl.scratchMark();
        const x = tl.zeros([8], "f32");
        tl.scratchRelease(mark);
        await tl.load(hbm(0), [8], "f32", { out: x });
      }),
    );
    expect(released.message).toMatch(/was released by tl\.scratchRelease/);
  });
});

describe("runner mode on the simulated machine", () => {
  it("each primitive takes time on its engine: load on PE_DMA, dot on PE_GEMM (2056 ns for 128^3 f16), exp on PE_MATH", async () => {
    const machine = machineOf();
    const marks: number[] = [];
    async function kernel(tl: TLContext) {
      const a = await tl.load(hbm(0), [128, 128], "f16");
      const b = await tl.load(hbm(65536), [128, 128], "f16");
      marks.push(machine.env.now);
      const c = await tl.dot(a, b);
      marks.push(machine.env.now);
      await tl.exp(c);
    }
    await runKernel(machine, kernel);
    // PE_CPU dispatch 2 ns; the fetch of A and B from PE_TCM, 1 + 65536 / 512 = 129; (4 x 4 x 128
    // + 8) cycles at 1 GHz; the store of the f32 result, 1 + 65536 / 512 = 129.
    expect((marks[1] as number) - (marks[0] as number)).toBe(2 + 129 + 2056 + 129);
    const ops = (kind: string) => machine.component(`sip0.cube0.pe0.${kind}`).stats.ops;
    expect([ops("pe_dma"), ops("pe_gemm"), ops("pe_math")]).toEqual([2, 1, 1]);
  });

  it("tl.load returns the real bytes; tl.store is visible at issue; a kernel may branch on loaded values", async () => {
    const machine = machineOf();
    const memory = new TestMemory();
    memory.write(hbm(0), Tensor.fromArray([3, -1, 2, 5], [4], "i32").bytes);
    const seen: number[] = [];
    async function kernel(tl: TLContext) {
      const flags = await tl.load(hbm(0), [4], "i32");
      for (let i = 0; i < 4; i++) {
        const flag = flags.data.get(i);
        seen.push(flag);
        if (flag > 0) await tl.cycles(flag * 10);
      }
      await tl.store(hbm(256), flags);
      const back = await tl.load(hbm(256), [4], "i32");
      seen.push(back.data.get(3));
    }
    const { commands } = await runKernel(machine, kernel, [], { memory });
    expect(seen).toEqual([3, -1, 2, 5, 5]);
    // Only the positive flags issue cycles.
    expect(commands.filter((c) => c.kind === "cycles").map((c) => c.kind === "cycles" && c.cycles)).toEqual([
      30, 20, 50,
    ]);
    expect(new Tensor([4], "i32", memory.read(hbm(256), 16)).toFloat64Array()).toEqual(
      new Float64Array([3, -1, 2, 5]),
    );
  });

  it("reading a compute result in phase 1 is TL_PENDING_HANDLE naming the op, kernel and PE", async () => {
    const machine = machineOf();
    async function peek(tl: TLContext) {
      const x = await tl.load(hbm(0), [8, 8], "f32");
      const y = await tl.exp(x);
      if (y.data.get(0, 0) > 1) await tl.cycles(1);
    }
    const error = await failure(runKernel(machine, peek, [], { placement: placementOf(3) }));
    expect(error.code).toBe("TL_PENDING_HANDLE");
    expect(error.message).toMatch(/kernel peek on sip0\.cube0\.pe3 at t=/);
    expect(error.message).toMatch(/handle #1 \(f32 \[8, 8\] in tcm\) from tl\.exp is pending/);
  });

  it("command-list and runner mode issue the same commands for a kernel that does not branch on data", async () => {
    async function kernel(tl: TLContext) {
      const mark = tl.scratchMark();
      for (let k = 0; k < 3; k++) {
        const a = await tl.load(hbm(k * 4096), [32, 64], "f16");
        const b = await tl.load(hbm(65536 + k * 4096), [64, 32], "f16");
        const c = await tl.dot(a, b);
        const d = await tl.relu(c);
        await tl.store(hbm(2 ** 20 + k * 4096), await d.to("f16"));
        tl.scratchRelease(mark);
      }
      const h = await tl.composite("gemm", tl.ref(hbm(0), [128, 128]), tl.ref(hbm(0), [128, 128]), {
        outPtr: hbm(2 ** 21),
      });
      await tl.wait(h);
    }
    const listed = await commandList(kernel, [], {
      kernel: "kernel",
      placement: placementOf(),
      scratch: { offset: 2 ** 20, bytes: 2 ** 20 },
    });
    const { commands } = await runKernel(machineOf(), kernel);
    expect(commands).toEqual(listed);
    expect(listed).toHaveLength(3 * 6 + 2);
  });

  it("hundreds of PEs' kernels interleave deterministically", async () => {
    const run = async () => {
      const machine = machineOf({ sip: { cubes: 4 }, system: { sips: 2 } } as never);
      const { KernelHost, KernelRunner } = await import("./runner.js");
      const host = new KernelHost(machine.env);
      const order: string[] = [];
      const pes = machine.graph.nodes.filter((node) => node.kind === "pe").map((node) => node.id);
      async function kernel(tl: TLContext) {
        const pid = tl.programId(0) + 8 * tl.programId(1);
        for (let i = 0; i < 3; i++) {
          await tl.cycles(((pid * 7 + i) % 5) + 1);
          order.push(`${tl.placement.pe}:${i}@${machine.env.now}`);
        }
      }
      const done = machine.launch({
        pes,
        program: (pe) => {
          const node = machine.graph.node(pe);
          return new KernelRunner(host, kernel, [], {
            kernel: "k",
            placement: {
              pe,
              sip: node.sip as number,
              cube: node.cube as number,
              peIndex: node.pe as number,
              programId: [node.pe as number, (node.cube as number) + 4 * (node.sip as number), 0],
              numPrograms: [8, 8, 1],
            },
            scratch: { offset: 2 ** 20, bytes: 4096 },
          });
        },
      });
      await host.run(done);
      return { order, end: machine.env.now, starts: host.started, pes: pes.length };
    };
    const first = await run();
    const second = await run();
    expect(first.pes).toBe(64);
    expect(first.starts).toBe(64);
    expect(first.order).toHaveLength(64 * 3);
    expect(second).toEqual(first);
  });
});

describe("kernel errors are located", () => {
  it("scratch overflow names the kernel, PE, sizes and what to do", async () => {
    const error = await failure(
      runKernel(
        machineOf(),
        async function hungry(tl: TLContext) {
          await tl.load(hbm(0), [64, 64], "f32"); // 16 KiB
          await tl.load(hbm(0), [64, 64], "f32"); // 16 KiB more than the 20 KiB
        },
        [],
        { scratch: 20 * 1024 },
      ),
    );
    expect(error.code).toBe("TL_SCRATCH_OVERFLOW");
    expect(error.message).toMatch(/kernel hungry.*sip0\.cube0\.pe0/);
    expect(error.message).toMatch(
      /needs 16384 bytes .* 16384 of the 20480 scratch bytes are in use \(4096 free\)\. Release tiles/,
    );
  });

  it("two commands in flight, a thrown error, and awaiting a timer are KERNEL_FAILED", async () => {
    const twice = await failure(
      runKernel(machineOf(), async function eager(tl: TLContext) {
        const first = tl.cycles(1);
        await tl.cycles(2);
        await first;
      }),
    );
    expect(twice.code).toBe("KERNEL_FAILED");
    expect(twice.message).toMatch(
      /tl\.cycles at packages\/tl\/src\/context\.test\.ts:\d+:\d+ was still in flight when tl\.cycles at packages\/tl\/src\/context\.test\.ts:\d+:\d+ was issued/,
    );
    const thrown = await failure(
      runKernel(machineOf(), async function boom(tl: TLContext) {
        await tl.cycles(5);
        throw new Error("boom");
      }),
    );
    expect(thrown.code).toBe("KERNEL_FAILED");
    expect(thrown.message).toMatch(/kernel boom on sip0\.cube0\.pe0 at t=5 ns: the kernel threw: boom/);
    const sleepy = await failure(
      runKernel(machineOf(), async function sleepy(tl: TLContext) {
        await tl.cycles(1);
        // Long enough that a loaded machine (the whole suite on 2 cores) cannot fire it before
        // the host's check (one macrotask turn); the run fails at once, it is never waited for.
        await new Promise((resolve) => setTimeout(resolve, 2000).unref());
        await tl.cycles(1);
      }),
    );
    expect(sleepy.message).toMatch(/awaited something that is not a tl call/);
  });

  it("a released handle cannot be used", async () => {
    const error = await failure(
      list(async (tl) => {
        const mark = tl.scratchMark();
        const x = await tl.load(hbm(0), [8], "f16");
        tl.scratchRelease(mark);
        await tl.exp(x);
      }),
    );
    expect(error.message).toMatch(/handle #0 \(f16 \[8\] in tcm\) from tl\.load was released/);
    // The result of a dot into an accumulator lives in the accumulator's scratch: released with it.
    const accumulated = await failure(
      list(async (tl) => {
        const a = await tl.load(hbm(0), [32, 32], "f16");
        const mark = tl.scratchMark();
        let acc = tl.zeros([32, 32], "f32");
        acc = await tl.dot(a, a, acc);
        tl.scratchRelease(mark);
        await tl.store(hbm(4096), acc);
      }),
    );
    expect(accumulated.message).toMatch(/from tl\.dot was released by tl\.scratchRelease/);
  });
});

describe("KernelRegistry", () => {
  it("register refuses duplicates, define replaces (last call wins), get lists what exists", () => {
    const registry = new KernelRegistry();
    const a = async () => {};
    const b = async () => {};
    registry.register("gemm", a);
    expect(() => registry.register("gemm", b)).toThrow(/already registered/);
    registry.define("gemm", b);
    expect(registry.get("gemm")).toBe(b);
    registry.register("add", a);
    expect(() => registry.get("softmax")).toThrow(
      /no kernel named "softmax" is registered; registered: add, gemm/,
    );
  });
});
