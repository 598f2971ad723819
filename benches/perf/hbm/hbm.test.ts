import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { MemoryHarness } from "@kb/probe";
import { expandTopology, resolveTopology } from "@kb/topology";
import { loadTopologyGraphFile } from "@kb/topology/node";
import { afterAll, describe, expect, it, vi } from "vitest";
import { topologyFile } from "../report.js";
import { main } from "./cli.js";
import { CONFIG_META, chooseImpl, configNames, isRegistered, loadConfig } from "./configs.js";
import { figuresOf, runClosedLoop } from "./driver.js";
import { parseOptions, UsageError } from "./options.js";
import { parseTrace, type Trace } from "./trace.js";
import { runWholeMachine } from "./whole-machine.js";

/** A trace in the kb-fidelity-trace v1 format: `lines` per requester at `stride` bytes. */
function traceText(options: {
  pattern: string;
  requesters: number;
  window: number;
  lines: number;
  stride: number;
  mix?: "read" | "rw21";
}): string {
  const { pattern, requesters, window, lines, stride } = options;
  const mix = options.mix ?? "read";
  const out = [
    "# kb-fidelity-trace v1",
    `# pattern=${pattern} mix=${mix} requesters=${requesters} window=${window} line_bytes=64 requests=${requesters * lines}`,
  ];
  for (let r = 0; r < requesters; r++) {
    for (let i = 0; i < lines; i++) {
      const op = mix === "rw21" && i % 3 === 2 ? "W" : "R";
      out.push(`${r} 0x${(r * 2 ** 24 + i * stride).toString(16)} ${op}`);
    }
  }
  return `${out.join("\n")}\n`;
}

/** A shipped configuration on hbm_ctrl_v1, as a harness. */
function v1Harness(name: string): { harness: MemoryHarness; tckNs: number; peakGbs: number; access: number } {
  const config = loadConfig(name);
  const { topology } = chooseImpl(config.topology, { impl: "hbm_ctrl_v1" });
  const hbm = topology.cube.hbm;
  return {
    harness: new MemoryHarness(expandTopology(topology)),
    tckNs: config.meta.tckNs,
    peakGbs: hbm.channels * hbm.pseudo_channels * hbm.pc_bw_gbs,
    access: hbm.access_latency_ns,
  };
}

describe("the figures (README: steady bandwidth, nearest-rank percentiles)", () => {
  it("counts the requests completed in (t10, t90] over t90 - t10", () => {
    // 10 requests, one every 2 ns from 2 to 20: t10 = 2 (1st), t90 = 18 (9th); 8 in (2, 18].
    const completions = Float64Array.from({ length: 10 }, (_, i) => 2 * (i + 1));
    const latencies = Float64Array.from([5, 1, 4, 2, 3]);
    const f = figuresOf(completions, latencies, 64, 100);
    expect(f.t10_ns).toBe(2);
    expect(f.t90_ns).toBe(18);
    expect(f.steady_gbs).toBeCloseTo((64 * 8) / 16, 12);
    expect(f.whole_gbs).toBeCloseTo((64 * 10) / 20, 12);
    expect(f.pct_peak).toBeCloseTo(32, 12);
    expect(f.read_lat_mean_ns).toBe(3);
    expect(f.read_lat_p50_ns).toBe(3);
    expect(f.read_lat_p99_ns).toBe(5);
    expect(f.sim_ns).toBe(20);
  });
});

describe("the closed loop on hbm_ctrl_v1 (hand-computed)", () => {
  it("idle-hit on hbm3: latency = access_latency_ns + 64 B at 25.6 GB/s, one line per 111 ticks", () => {
    const { harness, tckNs, peakGbs, access } = v1Harness("hbm3");
    const trace = parseTrace(
      traceText({ pattern: "idle-hit", requesters: 1, window: 1, lines: 512, stride: 64 }),
    );
    const f = runClosedLoop(trace, harness, { tckNs, peakGbs });
    // RoBaBgSiPcCo4ChCo1 keeps a line on one pseudo-channel: one 64 B request, 2.5 ns of bus.
    const latency = access + 64 / 25.6;
    expect(latency).toBe(34.375);
    expect(f.read_lat_mean_ns).toBeCloseTo(latency, 9);
    expect(f.read_lat_p50_ns).toBeCloseTo(latency, 9);
    expect(f.read_lat_p99_ns).toBeCloseTo(latency, 9);
    // The data returns at tick 110 after acceptance (34.375 / 0.3125); the slot is free the
    // tick after: a line every 111 ticks.
    expect(f.steady_gbs).toBeCloseTo(64 / (111 * tckNs), 9);
    expect(f.sim_ns).toBeCloseTo(511 * 111 * tckNs + latency, 6);
    expect(f.refusals).toBe(0);
    expect(f.row_hit_rate).toBeNull();
    // Skipping idle ticks: about three visits per line, not 111.
    expect(f.ticks_visited).toBeLessThan(4 * 512);
  });

  it("idle-hit on hbm3-xor: the two 32 B halves on two pseudo-channels in parallel", () => {
    const { harness, tckNs, peakGbs, access } = v1Harness("hbm3-xor");
    const trace = parseTrace(
      traceText({ pattern: "idle-hit", requesters: 1, window: 1, lines: 256, stride: 64 }),
    );
    const f = runClosedLoop(trace, harness, { tckNs, peakGbs });
    expect(f.read_lat_mean_ns).toBeCloseTo(access + 32 / 25.6, 9);
    expect(f.read_lat_p99_ns).toBeCloseTo(access + 32 / 25.6, 9);
  });

  it("a saturating seq on one pseudo-channel runs at the PC bus rate; v1 refuses nothing", () => {
    const topology = resolveTopology({
      name: "one-pc",
      cube: {
        hbm: {
          impl: "hbm_ctrl_v1",
          channels: 1,
          pseudo_channels: 1,
          pc_bw_gbs: 25.6,
          access_latency_ns: 40,
          flit_bytes: 64,
          capacity_bytes: 2 ** 30,
        },
      },
    });
    const harness = new MemoryHarness(expandTopology(topology));
    const trace = parseTrace(
      traceText({ pattern: "seq", requesters: 1, window: 256, lines: 4096, stride: 64 }),
    );
    const f = runClosedLoop(trace, harness, { tckNs: 0.3125, peakGbs: 25.6 });
    expect(f.steady_gbs).toBeCloseTo(25.6, 9);
    expect(f.pct_peak).toBeCloseTo(100, 9);
    expect(f.whole_gbs).toBeLessThan(25.6);
    // 4096 lines at 2.5 ns each after the first access.
    expect(f.sim_ns).toBeCloseTo(40 + 4096 * 2.5, 6);
    // hbm_ctrl_v1 keeps no controller queue (no maxPending): the port takes every request on
    // arrival and the bus rate alone paces the loop, so nothing is ever refused.
    expect(f.refusals).toBe(0);
    expect(f.reads).toBe(4096);
  });

  it("writes are posted: they leave the window at acceptance and complete there", () => {
    const { harness, tckNs, peakGbs, access } = v1Harness("hbm3");
    const trace = parseTrace(
      traceText({ pattern: "idle-hit", requesters: 1, window: 1, lines: 300, stride: 64, mix: "rw21" }),
    );
    const f = runClosedLoop(trace, harness, { tckNs, peakGbs });
    expect(f.writes).toBe(100);
    expect(f.reads).toBe(200);
    expect(f.read_lat_mean_ns).toBeCloseTo(access + 2.5, 9);
    // R at tick 222 g, R at 222 g + 111, then the write at 222 (g + 1) with the next group's
    // first read in the same tick: the last request is the write at tick 22 200.
    expect(f.sim_ns).toBeCloseTo(100 * 222 * tckNs, 9);
    expect(f.steady_gbs).toBeCloseTo((3 * 64) / (222 * tckNs), 1);
  });

  it("round-robin requesters each keep their own window", () => {
    const { harness, tckNs, peakGbs, access } = v1Harness("hbm3");
    // Four requesters 16 MiB apart, window 2, lines on distinct channels: no queueing.
    const trace = parseTrace(
      traceText({ pattern: "streams", requesters: 4, window: 2, lines: 64, stride: 64 }),
    );
    const f = runClosedLoop(trace, harness, { tckNs, peakGbs });
    expect(f.outstanding).toBe(8);
    expect(f.requests).toBe(256);
    expect(f.read_lat_mean_ns).toBeGreaterThanOrEqual(access + 2.5 - 1e-9);
  });
});

describe("the closed loop on hbm_ctrl_v2 (channel queues)", () => {
  it("a channel's pseudo-channels switch write drain together: seq rw21 with reads on one PC and writes on the other completes", () => {
    // Per-PC modes over the channel's shared counts could leave one PC in read mode holding
    // only writes and the other in write mode holding only reads, both blocked for good.
    const config = loadConfig("hbm3");
    const { topology } = chooseImpl(config.topology, {});
    const harness = new MemoryHarness(expandTopology(topology));
    const trace = parseTrace(
      traceText({ pattern: "seq", requesters: 1, window: 256, lines: 32768, stride: 64, mix: "rw21" }),
    );
    const f = runClosedLoop(trace, harness, { tckNs: config.meta.tckNs, peakGbs: 819.2, stallNs: 10_000 });
    expect(f.requests).toBe(32768);
  }, 60_000);
});

describe("the closed loop with partial lines (--partial-lines: Ramulator's driver sends 32 B halves)", () => {
  const run = (params: Record<string, unknown>, partialLines: boolean, stallNs?: number) => {
    const config = loadConfig("hbm3");
    const { topology } = chooseImpl(config.topology, { params });
    const harness = new MemoryHarness(expandTopology(topology));
    const sent: number[] = [];
    const request = harness.request.bind(harness);
    vi.spyOn(harness, "request").mockImplementation((kind, offset, bytes) => {
      sent.push(bytes);
      return request(kind, offset, bytes);
    });
    const trace = parseTrace(
      traceText({ pattern: "idle-hit", requesters: 1, window: 1, lines: 8, stride: 64 }),
    );
    const options = {
      tckNs: config.meta.tckNs,
      peakGbs: 819.2,
      partialLines,
      ...(stallNs ? { stallNs } : {}),
    };
    return { figures: () => runClosedLoop(trace, harness, options), sent };
  };

  it("a line is offered as two 32 B requests; unloaded, its latency is the whole line's (both halves arrive in one tick)", () => {
    const whole = run({}, false);
    const halves = run({}, true);
    const w = whole.figures();
    const h = halves.figures();
    expect(whole.sent).toEqual(Array(8).fill(64));
    expect(halves.sent).toEqual(Array(16).fill(32));
    expect(h.reads).toBe(8);
    expect(h.read_lat_mean_ns).toBeCloseTo(w.read_lat_mean_ns as number, 9);
    expect(h.sim_ns).toBeCloseTo(w.sim_ns, 9);
  });

  it("a read queue of one burst never takes a whole 64 B line, but takes it half by half", () => {
    expect(() => run({ read_queue: 1 }, false, 1000).figures()).toThrow(/never frees its queue/);
    const h = run({ read_queue: 1 }, true).figures();
    expect(h.reads).toBe(8);
  });
});

describe("the closed loop's room checks (issue 37 point 3: the driver's own cost)", () => {
  it("asks a full lane's room once a tick per kind, not once per refused requester", () => {
    // hbm_ctrl_v2 on hbm3: 16 requesters with 8 lines in flight each, every line on lane 0, so
    // its 32-burst read queue refuses most heads every tick. Within a tick nothing runs and the
    // room only shrinks, so the second refused requester needs no question to the model.
    const config = loadConfig("hbm3");
    const { topology } = chooseImpl(config.topology, {});
    const harness = new MemoryHarness(expandTopology(topology));
    const map = harness.addressMap;
    const onLane0: number[] = [];
    for (let at = 0; onLane0.length < 16 * 64; at += 64) if (map.lane(at) === 0) onLane0.push(at);
    const lines = [
      "# kb-fidelity-trace v1",
      "# pattern=lane0 mix=read requesters=16 window=8 line_bytes=64 requests=1024",
    ];
    for (const [i, at] of onLane0.entries()) lines.push(`${i % 16} 0x${at.toString(16)} R`);
    const trace = parseTrace(`${lines.join("\n")}\n`);
    const model = harness.memory.model as unknown as { room: (port: number, kind: string) => number };
    const room = vi.spyOn(model, "room");
    const f = runClosedLoop(trace, harness, { tckNs: config.meta.tckNs, peakGbs: 819.2 });
    expect(f.requests).toBe(1024);
    // Many refusals a tick (else the bound below proves nothing) ...
    expect(f.refusals).toBeGreaterThan(4 * f.ticks_visited);
    // ... but at most one refused question a tick (one lane, reads only) besides one per request sent.
    expect(room.mock.calls.length).toBeLessThanOrEqual(f.requests + f.ticks_visited);
  }, 60_000);
});

describe("--whole-machine", () => {
  it("runs a trace from PE DMAs through the fabric; the memory sees part of the latency", () => {
    const { graph } = loadTopologyGraphFile(topologyFile("ref-cube.yaml"));
    const trace = parseTrace(
      traceText({ pattern: "tile", requesters: 4, window: 4, lines: 64, stride: 8192 }),
    );
    const f = runWholeMachine(trace, graph, { tckNs: 0.3125 });
    expect(f.requesters).toHaveLength(4);
    expect(new Set(f.requesters).size).toBe(4);
    expect(f.reads).toBe(256);
    const atPe = f.read_lat_mean_ns as number;
    const atHbm = f.memory_lat_mean_ns as number;
    // ref-cube's memory is hbm_ctrl_v2 (hbm3 preset): no read is faster than a row hit's
    // tCL + tBL = 12.5 + 1.25 ns.
    expect(graph.topology.cube.hbm.impl).toBe("hbm_ctrl_v2");
    expect(atHbm).toBeGreaterThanOrEqual(13.75);
    expect(atPe).toBeGreaterThan(atHbm);
    expect(f.fabric_share).toBeCloseTo((atPe - atHbm) / atPe, 12);
    expect(f.busiestComponent).not.toBeNull();
  });
});

describe("the configurations", () => {
  it("one per reference configuration, each a valid topology fragment", () => {
    expect(configNames().slice(0, 6)).toEqual(Object.keys(CONFIG_META));
    for (const name of configNames()) {
      const config = loadConfig(name);
      expect(config.topology.cube.hbm.impl).toBe("hbm_ctrl_v2");
      const { topology } = chooseImpl(config.topology, { impl: "hbm_ctrl_v1" });
      expect(() => new MemoryHarness(expandTopology(topology))).not.toThrow();
    }
  });

  it.runIf(isRegistered("hbm_ctrl_v2"))("build with hbm_ctrl_v2 and their params as written", () => {
    for (const name of configNames()) {
      const choice = chooseImpl(loadConfig(name).topology);
      expect(choice).toMatchObject({ impl: "hbm_ctrl_v2", note: null });
      expect(() => new MemoryHarness(expandTopology(choice.topology))).not.toThrow();
    }
  });

  it("offer a line as the reference driver does: Ramulator's 32 B requests in parts, DRAMsim3's 64 B access whole", () => {
    // Ramulator 2.1 takes requests of at most prefetch x channel width / 8 bytes: 4 x 64 / 8 on
    // HBM2, 8 x 32 / 8 on HBM3, both 32 B, the configurations' burst: so a 64 B line is two
    // requests on both standards. DRAMsim3's legacy HBM2 accesses 64 B at once.
    for (const name of configNames().slice(0, 6)) {
      const config = loadConfig(name);
      const burst = config.topology.cube.hbm.burst_bytes;
      if (config.meta.reference === "Ramulator 2.1") {
        expect([name, burst, config.meta.partialLines]).toEqual([name, 32, true]);
      } else {
        expect([name, burst, config.meta.partialLines]).toEqual([name, 64, false]);
      }
    }
    expect(parseOptions([])?.partialLines).toBeUndefined(); // the configuration's
    expect(parseOptions(["--partial-lines"])?.partialLines).toBe(true);
    expect(parseOptions(["--whole-lines"])?.partialLines).toBe(false);
    expect(() => parseOptions(["--partial-lines", "--whole-lines"])).toThrow(UsageError);
  });

  it("map the address bits of hbm-reference.md", () => {
    const mapOf = (name: string) => expandTopology(loadConfig(name).topology).hbmAddressMap();
    const hbm3 = mapOf("hbm3");
    expect(hbm3.locate(2 ** 14).pseudoChannel).toBe(1);
    expect(hbm3.locate(2 ** 15).sid).toBe(1);
    expect(hbm3.locate(3 * 2 ** 6).channel).toBe(3);
    expect(hbm3.locate(2 ** 5).column).toBe(1);
    expect(hbm3.locate(2 ** 20).row).toBe(1);
    const xor = mapOf("hbm3-xor");
    expect(xor.lane(0)).not.toBe(xor.lane(32)); // the halves of a line: two PCs of one channel
    expect(xor.locate(2 ** 12).sid).toBe(1);
    expect(xor.locate(2 ** 10).sid).toBe(1); // SID ^= A10
    const hbm2 = mapOf("hbm2");
    expect(hbm2.locate(2 ** 13).pseudoChannel).toBe(1);
    expect(hbm2.locate(2 ** 18).row).toBe(1);
    const ds3 = mapOf("dramsim3-hbm2");
    expect(ds3.locate(2 ** 11).channel).toBe(1);
    expect(ds3.locate(2 ** 6).column).toBe(1);
    expect(ds3.locate(2 ** 14).bank).toBe(1);
    expect(ds3.locate(2 ** 16).bankGroup).toBe(1);
    expect(ds3.locate(2 ** 18).row).toBe(1);
  });
});

describe("bench:hbm --trace", () => {
  const dir = mkdtempSync(join(tmpdir(), "kb-bench-hbm-test-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("runs any file of the format and writes reference.json's fields", async () => {
    const file = join(dir, "mine.trace");
    writeFileSync(
      file,
      traceText({ pattern: "mine", requesters: 2, window: 4, lines: 200, stride: 64, mix: "rw21" }),
    );
    const json = join(dir, "out.json");
    const write = vi.spyOn(process.stdout, "write").mockImplementation(() => true);
    let code: number;
    try {
      code = await main(["--trace", file, "--config", "hbm3", "--impl", "hbm_ctrl_v1", "--json", json]);
    } finally {
      write.mockRestore();
    }
    expect(code).toBe(0);
    const rows = JSON.parse(readFileSync(json, "utf8")) as Record<string, unknown>[];
    expect(rows).toHaveLength(1);
    const row = rows[0] as Record<string, unknown>;
    for (const field of [
      "simulator",
      "simulator_commit",
      "config",
      "pattern",
      "mix",
      "requests",
      "reads",
      "writes",
      "outstanding",
      "tck_ns",
      "peak_gbs",
      "steady_gbs",
      "whole_gbs",
      "pct_peak",
      "read_lat_mean_ns",
      "read_lat_p50_ns",
      "read_lat_p99_ns",
      "row_hit_rate",
      "sim_ns",
      "notes",
    ]) {
      expect(row).toHaveProperty(field);
    }
    expect(row).toMatchObject({
      simulator: "kernbench",
      config: "hbm3",
      pattern: "mine",
      mix: "rw21",
      requests: 400,
      writes: 132,
      outstanding: 8,
      impl: "hbm_ctrl_v1",
      reference: null,
    });
  });

  it("rejects a malformed trace with its line", () => {
    expect(() => parseTrace("# kb-fidelity-trace v1\n# requesters=1 window=1\n0 0x40 X\n", "t")).toThrow(
      /t:3/,
    );
    expect(() => parseTrace("# kb-fidelity-trace v1\n# requesters=1 window=1\n1 0x40 R\n", "t")).toThrow(
      /t:3/,
    );
    expect(() => parseTrace("0 0x40 R\n", "t")).toThrow(/kb-fidelity trace/);
    const trace: Trace = parseTrace(
      "# kb-fidelity-trace v1\n# requesters=2 window=3\n1 0x40 R\n0 0x80 W\n1 0xc0 R\n",
    );
    expect(trace.addresses.map((list) => [...list])).toEqual([[0x80], [0x40, 0xc0]]);
    expect(trace.reads).toBe(2);
    expect(trace.lineBytes).toBe(64);
  });
});
