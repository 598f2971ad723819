import { mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { MemorySink, OpLogger } from "@kb/oplog";
import { replay, Simulator, verifyOutcome } from "@kb/runtime";
import { describe, expect, test } from "vitest";
import { stepParts } from "../lib/serve/model.js";
import { readTraceFile } from "../lib/serve/node/trace-file.js";
import { generateTrace, parseTrace } from "../lib/serve/trace.js";
import llamaServe from "../llama-serve.js";
import { topologyFile } from "./llm-support.js";

describe("llama-serve traces", () => {
  test("a trace line that breaks the schema is refused at file:line, naming the field", () => {
    const text = [
      '{"arrival_ns": 0, "prompt_tokens": 8, "output_tokens": 2}',
      "",
      '{"arrival_ns": 10, "prompt_tokens": 8, "output_tokens": 0}',
    ].join("\n");
    expect(() => parseTrace(text, "trace.jsonl")).toThrow(
      /^\[RUNTIME_INVALID\] trace\.jsonl:3: llama-serve trace: output_tokens: .*Each line is one object/,
    );
    expect(() => parseTrace('{"arrival_ns": 0, "prompt": 8}', "t.jsonl")).toThrow(
      /t\.jsonl:1: .*unknown key/,
    );
    expect(() => parseTrace("{oops", "t.jsonl")).toThrow(/t\.jsonl:1: llama-serve trace: not JSON/);
    expect(() => parseTrace("\n\n", "t.jsonl")).toThrow(/t\.jsonl: llama-serve trace: no requests/);
    // Blank lines are skipped; ids follow the requests' order in the file.
    expect(parseTrace(text.replace('"output_tokens": 0', '"output_tokens": 1'), "trace.jsonl")).toEqual([
      { id: 0, arrivalNs: 0, promptTokens: 8, outputTokens: 2 },
      { id: 1, arrivalNs: 10, promptTokens: 8, outputTokens: 1 },
    ]);
  });

  test("a trace file is read inside the folder kb runs in and refused outside it", () => {
    const root = mkdtempSync(join(tmpdir(), "kb-serve-"));
    const inside = join(root, "in");
    mkdirSync(inside);
    writeFileSync(join(inside, "t.jsonl"), '{"arrival_ns": 5, "prompt_tokens": 8, "output_tokens": 2}\n');
    writeFileSync(join(root, "outside.jsonl"), '{"arrival_ns": 5, "prompt_tokens": 8, "output_tokens": 2}\n');
    symlinkSync(join(root, "outside.jsonl"), join(inside, "link.jsonl"));
    expect(readTraceFile("t.jsonl", inside)).toEqual([
      { id: 0, arrivalNs: 5, promptTokens: 8, outputTokens: 2 },
    ]);
    expect(() => readTraceFile("../outside.jsonl", inside)).toThrow(/outside the folder kb runs in/);
    expect(() => readTraceFile("link.jsonl", inside)).toThrow(/outside the folder kb runs in/);
    expect(() => readTraceFile("missing.jsonl", inside)).toThrow(/trace file missing\.jsonl not found/);
  });

  test("the generator is deterministic per seed: arrivals from 0, ascending, lengths within their ranges", () => {
    const options = {
      requests: 50,
      rate: 1000,
      seed: 7,
      promptMin: 4,
      promptMax: 9,
      outputMin: 1,
      outputMax: 3,
    };
    const trace = generateTrace(options);
    expect(generateTrace(options)).toEqual(trace);
    expect(generateTrace({ ...options, seed: 8 })).not.toEqual(trace);
    expect(trace[0]?.arrivalNs).toBe(0);
    for (const [i, r] of trace.entries()) {
      expect(r.id).toBe(i);
      if (i > 0)
        expect(r.arrivalNs).toBeGreaterThanOrEqual((trace[i - 1] as { arrivalNs: number }).arrivalNs);
      expect(r.promptTokens).toBeGreaterThanOrEqual(4);
      expect(r.promptTokens).toBeLessThanOrEqual(9);
      expect(r.outputTokens).toBeGreaterThanOrEqual(1);
      expect(r.outputTokens).toBeLessThanOrEqual(3);
    }
    expect(() => generateTrace({ ...options, outputMin: 4 })).toThrow(
      /outputMin \(4\) is above outputMax \(3\).*Raise outputMax or lower outputMin/,
    );
    // Every prompt length of [4, 9] comes up in 50 draws (each misses with probability (5/6)^50).
    expect(new Set(trace.map((r) => r.promptTokens)).size).toBe(6);
  });
});

describe("llama-serve steps on the model", () => {
  test("a step runs as a prefill part padded to whole blocks, then a decode part over the longest context in whole blocks", () => {
    const parts = stepParts(
      [
        { request: 0, kind: "decode", pos0: 20, tokens: 1 },
        { request: 1, kind: "decode", pos0: 7, tokens: 1 },
        { request: 2, kind: "prefill", pos0: 16, tokens: 5 },
        { request: 3, kind: "prefill", pos0: 0, tokens: 16 },
      ],
      8,
    );
    // Prefill: 2 chunks, the longest 16 tokens, the furthest start 16. Decode: position 20 is
    // the 21st, 3 blocks of 8: a context of 24, the new token at 23.
    expect(parts).toEqual([
      { phase: "prefill", shape: { batch: 2, tokens: 16, pos0: 16 } },
      { phase: "decode", shape: { batch: 2, tokens: 1, pos0: 23 } },
    ]);
  });

  test("tiny on default.yaml: a few requests run, the later prefill chunks and the decodes verify against the host reference", async () => {
    const sink = new MemorySink();
    const sim = await Simulator.fromTopology(topologyFile("default"), { opLogger: new OpLogger(sink) });
    const params = llamaServe.params.parse({
      requests: 3,
      rate: 1e5,
      promptMin: 20,
      promptMax: 30,
      outputMin: 2,
      outputMax: 3,
      chunk: 16,
      blockTokens: 8,
      checkShapes: 100,
      dtype: "f32",
    });
    const outcome = await llamaServe.run(sim, params);
    const verification = await verifyOutcome(
      outcome ?? undefined,
      replay(sim.hostWrites, sink.records).store,
    );
    const names = verification.outputs.map((o) => o.name);
    expect(verification.outputs.filter((o) => !o.pass)).toEqual([]);
    // A second chunk (from position 16) and a decode shape were among the checked ones.
    expect(names.some((name) => /^prefill\.\d+x\d+@16\./.test(name))).toBe(true);
    expect(names.some((name) => name.startsWith("decode."))).toBe(true);
    const report = outcome?.report;
    expect(report?.rows.map((row) => row[0]).slice(0, 9)).toEqual([
      "TTFT p50",
      "TTFT p90",
      "TTFT p99",
      "TPOT p50",
      "TPOT p90",
      "TPOT p99",
      "end-to-end latency p50",
      "end-to-end latency p90",
      "end-to-end latency p99",
    ]);
    expect(report?.series?.map((s) => s.name)).toEqual(["KV cache occupancy", "batch", "batch tokens"]);
    const kv = report?.series?.[0];
    expect(kv?.y.at(-1)).toBe(0); // everything freed at the end
    expect(kv?.x).toEqual([...(kv?.x ?? [])].sort((a, b) => a - b));
  }, 300_000);
});
