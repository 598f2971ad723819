import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { readmeExample } from "@kb/tooling/readme-example";
import { describe, expect, it } from "vitest";
import { MemorySink, OpLogger, stripTimes } from "./index.js";
import { JsonlSink, readOpLog } from "./node.js";

// The example of packages/oplog/README.md, run as written: `console` is a local that collects what
// the example prints, and the last test checks the code below still is the README's.
describe("README example", () => {
  it("logs a run to memory and to a file and reads it back", async () => {
    const printed: unknown[] = [];
    const console = { log: (value: unknown) => printed.push(value) };
    // README example start

    const tile = { shape_a: [128, 256], shape_b: [256, 128], shape_out: [128, 128] };

    // What the component hooks of a run would call: start() when a component begins servicing an op,
    // end() when it completes; times are simulated ns and never go backwards.
    function run(logger: OpLogger): void {
      const load = logger.start(0, "sip0.cube0.pe0.pe_dma", "memory", "dma_read", {
        src_addr: 0,
        dst_addr: 0x100_0000_0000,
        nbytes: 65536,
        src_space: "hbm",
        dst_space: "tcm",
      });
      logger.end(load, 1024);
      const prefetch = logger.start(1024, "sip0.cube0.pe0.pe_dma", "memory", "dma_read", {
        src_addr: 65536,
        dst_addr: 0x100_0001_0000,
        nbytes: 65536,
        src_space: "hbm",
        dst_space: "tcm",
      });
      const gemm = logger.start(
        1024,
        "sip0.cube0.pe0.pe_gemm",
        "gemm",
        "gemm_f16",
        {
          src_a_addr: 0x100_0000_0000,
          src_b_addr: 0x100_0002_0000,
          dst_addr: 0x100_0004_0000,
          ...tile,
          dtype_in: "f16",
          dtype_acc: "f32",
          dtype_out: "f16",
          transpose_a: false,
          transpose_b: false,
          layout_a: "row_major",
          layout_b: "row_major",
          layout_out: "row_major",
          addr_space: "tcm",
        },
        [load],
      ); // explicit dependency on record 0
      logger.end(gemm, 1536); // done first, but held back behind the prefetch (id 1)
      console.log(logger.pendingCount); // 2: the prefetch (open) and the GEMM (waiting for it)
      logger.end(prefetch, 2048); // both are written now, in id order
    }

    const memory = new MemorySink();
    const logger = new OpLogger(memory);
    run(logger);
    logger.close(); // throws OPLOG_MISUSE if an op never ended
    console.log(memory.records.map((r) => `${r.id} ${r.op_name} ${r.t_start}-${r.t_end}`));
    // [ '0 dma_read 0-1024', '1 dma_read 1024-2048', '2 gemm_f16 1024-1536' ]

    // The same run streamed to a file: written to ops.jsonl.tmp-<pid>, renamed on close.
    const path = join(mkdtempSync(join(tmpdir(), "oplog-")), "ops.jsonl");
    const fileLogger = new OpLogger(new JsonlSink(path));
    run(fileLogger);
    await fileLogger.close();
    const records = readOpLog(path); // validated; OPLOG_INVALID names file:line on a bad line
    console.log(records.length); // 3
    console.log(JSON.stringify(records.map(stripTimes)) === JSON.stringify(memory.records.map(stripTimes))); // true
    // README example end
    rmSync(dirname(path), { recursive: true, force: true });
    expect(printed).toEqual([
      2,
      ["0 dma_read 0-1024", "1 dma_read 1024-2048", "2 gemm_f16 1024-1536"],
      2,
      3,
      true,
    ]);
  });

  it("is the code of the README", () => {
    const { readme, test } = readmeExample(new URL("../README.md", import.meta.url), import.meta.url);
    expect(test).toBe(readme);
  });
});
