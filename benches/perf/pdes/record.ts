/**
 * Records the partition and time of every DES event of one `kb run`, for the parallel-DES study
 * (benches/perf/pdes/README.md):
 *
 *   node benches/dist/perf/pdes-record.js --bench llama-layer --param preset=tiny \
 *     --topology ref-4sip --out /tmp/pdes/tiny
 *
 * The run is `runBench` of @kb/runtime/node, as `kb run` does (timing-only host data). This
 * script, not the library, patches the engine's prototypes for the run:
 *
 * - `Environment.fire` (one call per DES event): the event's partition is the partition of the
 *   first thing it touches: a delivery in flight (its target component), a store or resource
 *   woken (its name), a transfer's completion (the process waiting on it), a process resumed
 *   (`Process._wake`, the process's name) or a message put into a component
 *   (`Component.enqueue`, the component's id); an event that touches none of them is "none"
 *   (condition callbacks, bare events), counted by kind in OUT.json's `unclaimed`.
 * - `Packet.forward` (a packet leaving a stop for the next): a cross-partition message when the
 *   two stops' components are in different partitions; its time and its delay to the tail's
 *   arrival are recorded.
 *
 * A partition is a cube (`sipS.cubeC.*`), the SIP level above the cubes (`sipS.*`: IO_CPU, the
 * SIP links' ends) or the host. Written: OUT.events.bin (per event: float64 time), OUT.parts.bin
 * (per event: uint8 partition), OUT.cross.bin (per cross message: float64 time, float64 delay,
 * then uint8 from, uint8 to), OUT.json (the partition names, counts, the topology's lookahead,
 * the run's CPU time). With --plain nothing is patched and only the CPU time and the run's result
 * are printed (the cost per event without the recorder).
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { Component, Packet } from "@kb/components";
import { Environment, Process } from "@kb/des";
import type { Bench } from "@kb/runtime";
import { runBench } from "@kb/runtime/node";
import { loadTopologyGraphFile } from "@kb/topology/node";
import allreduce from "../../allreduce.js";
import gemm from "../../gemm.js";
import llamaLayer from "../../llama-layer.js";
import { topologyFile } from "../report.js";
import { partitionOfId, topologyLookahead } from "./partition.js";

const BENCHES: Record<string, { bench: Bench<any>; file: string }> = {
  "llama-layer": { bench: llamaLayer as Bench<any>, file: "llama-layer.ts" },
  allreduce: { bench: allreduce as Bench<any>, file: "allreduce.ts" },
  gemm: { bench: gemm as Bench<any>, file: "gemm.ts" },
};

/** A growing typed array of float64 or uint8. */
class Column<T extends Float64Array | Uint8Array> {
  length = 0;
  constructor(
    public data: T,
    private readonly make: (n: number) => T,
  ) {}
  push(value: number): void {
    if (this.length === this.data.length) {
      const next = this.make(this.data.length * 2);
      next.set(this.data);
      this.data = next;
    }
    this.data[this.length++] = value;
  }
  bytes(): Uint8Array {
    return new Uint8Array(this.data.buffer, 0, this.length * this.data.BYTES_PER_ELEMENT);
  }
}

const f64 = (n: number) => new Float64Array(n);
const u8 = (n: number) => new Uint8Array(n);

const { values } = parseArgs({
  options: {
    bench: { type: "string", default: "llama-layer" },
    param: { type: "string", multiple: true, default: [] },
    topology: { type: "string", default: "ref-4sip.yaml" },
    out: { type: "string" },
    plain: { type: "boolean", default: false },
  },
});
const entry = BENCHES[values.bench as string];
if (entry === undefined) {
  process.stderr.write(`pdes-record: --bench must be one of ${Object.keys(BENCHES).join(", ")}\n`);
  process.exit(2);
}
const params: Record<string, string> = {};
for (const text of values.param as string[]) {
  const at = text.indexOf("=");
  if (at < 1) {
    process.stderr.write(`pdes-record: --param needs KEY=VALUE, got "${text}"\n`);
    process.exit(2);
  }
  params[text.slice(0, at)] = text.slice(at + 1);
}
const topology = topologyFile(values.topology as string);

// Partition numbers by name, in order of first sight; 0 is "none".
const names = ["none"];
const numberOf = new Map<string, number>([["none", 0]]);
const partOfLabel = new Map<string | number, number>();
function part(label: string | number): number {
  let n = partOfLabel.get(label);
  if (n === undefined) {
    const name = typeof label === "string" ? partitionOfId(label) : "none";
    n = numberOf.get(name);
    if (n === undefined) {
      n = names.length;
      names.push(name);
      numberOf.set(name, n);
    }
    partOfLabel.set(label, n);
  }
  return n;
}
const partOfComponent = (component: Component | null): number =>
  component === null ? 0 : part(component.id);

const times = new Column(f64(1 << 20), f64);
const parts = new Column(u8(1 << 20), u8);
const crossTimes = new Column(f64(1 << 16), f64);
const crossDelays = new Column(f64(1 << 16), f64);
const crossFrom = new Column(u8(1 << 16), u8);
const crossTo = new Column(u8(1 << 16), u8);

/** Events no partition claimed, by what their first callback was. */
const unclaimed = new Map<string, number>();
if (!values.plain) {
  let current = -1;
  const proto = Environment.prototype as any;
  const fire = proto.fire as (event: unknown) => void;
  proto.fire = function patchedFire(this: Environment, event: any): void {
    const outer = current;
    current = -1;
    const first = event._cb0;
    // Callbacks that name no process: a delivery in flight (its target component), a store or
    // resource woken (its name), a transfer's completion (the process waiting on it).
    if (first !== null && first !== undefined) {
      if (typeof first === "function") {
        if (first.name === "deliverNow") current = part(event._value.target.id);
        else if (first.name === "succeedTransfer") {
          const waiter = event._value.done._cb0;
          if (waiter instanceof Process) current = part((waiter as any).label);
        }
      } else if (!(first instanceof Process) && typeof first.name === "string") current = part(first.name);
    }
    try {
      fire.call(this, event);
    } finally {
      times.push(this.now);
      parts.push(Math.max(current, 0));
      if (current < 0) {
        const kind =
          first === null
            ? `no callback (${event.constructor.name})`
            : typeof first === "function"
              ? `callback ${first.name || "(anonymous)"}`
              : `waiter ${first.constructor.name}`;
        unclaimed.set(kind, (unclaimed.get(kind) ?? 0) + 1);
      }
      current = outer;
    }
  };
  const processProto = Process.prototype as any;
  const wake = processProto._wake as (event: unknown) => void;
  processProto._wake = function patchedWake(this: any, event: unknown): void {
    if (current < 0) current = part(this.label);
    wake.call(this, event);
  };
  const componentProto = Component.prototype as any;
  const enqueue = componentProto.enqueue as (message: unknown) => unknown;
  componentProto.enqueue = function patchedEnqueue(this: Component, message: unknown): unknown {
    if (current < 0) current = part(this.id);
    return enqueue.call(this, message);
  };
  const packetProto = Packet.prototype as any;
  const forward = packetProto.forward as (from: Component) => unknown;
  packetProto.forward = function patchedForward(this: Packet, from: Component): unknown {
    const stops = this.path.stops;
    const at = (this as any).stop as number;
    const here = stops[at] as { component: Component | null };
    const next = stops[at + 1] as { component: Component | null } | undefined;
    const now = from.env.now;
    const result = forward.call(this, from);
    if (next !== undefined) {
      const a = partOfComponent(here.component);
      const b = partOfComponent(next.component);
      if (a !== b && a !== 0 && b !== 0) {
        crossTimes.push(now);
        crossDelays.push(this.tailNs - now);
        crossFrom.push(a);
        crossTo.push(b);
      }
    }
    return result;
  };
}

// CPU inside Environment.run (the event loop) against the whole run: what a parallel engine could
// divide; the rest (machine build, host planning, uploads) stays serial. Patched in both modes.
let runCpuUs = 0;
let runDepth = 0;
{
  const proto = Environment.prototype as any;
  const runLoop = proto.run as (...args: unknown[]) => unknown;
  proto.run = function patchedRun(this: Environment, ...args: unknown[]): unknown {
    if (runDepth > 0) return runLoop.apply(this, args);
    runDepth += 1;
    const start = process.cpuUsage();
    try {
      return runLoop.apply(this, args);
    } finally {
      runCpuUs += process.cpuUsage(start).user;
      runDepth -= 1;
    }
  };
}

const { graph } = loadTopologyGraphFile(topology);
const cpu0 = process.cpuUsage();
const run = await runBench({
  bench: entry.bench,
  benchFile: fileURLToPath(new URL(`../../${entry.file}`, import.meta.url)),
  topology,
  params,
});
const cpu = process.cpuUsage(cpu0);
const summary = {
  bench: values.bench,
  params,
  topology: values.topology,
  simTimeNs: run.results.simTimeNs,
  events: run.results.events,
  userCpuS: cpu.user / 1e6,
  systemCpuS: cpu.system / 1e6,
  /** User CPU inside Environment.run, s. */
  runUserCpuS: runCpuUs / 1e6,
  recorded: values.plain ? null : times.length,
  crossMessages: values.plain ? null : crossTimes.length,
  partitions: values.plain ? null : names,
  unclaimed: values.plain ? null : Object.fromEntries([...unclaimed.entries()].sort((a, b) => b[1] - a[1])),
  lookahead: topologyLookahead(graph),
};
if (!values.plain) {
  const out = values.out ?? join("/tmp/pdes", String(values.bench));
  mkdirSync(dirname(out), { recursive: true });
  writeFileSync(`${out}.events.bin`, times.bytes());
  writeFileSync(`${out}.parts.bin`, parts.bytes());
  const cross = new Uint8Array(crossTimes.length * 18);
  const view = new DataView(cross.buffer);
  for (let i = 0; i < crossTimes.length; i++) {
    view.setFloat64(i * 18, crossTimes.data[i] as number, true);
    view.setFloat64(i * 18 + 8, crossDelays.data[i] as number, true);
    view.setUint8(i * 18 + 16, crossFrom.data[i] as number);
    view.setUint8(i * 18 + 17, crossTo.data[i] as number);
  }
  writeFileSync(`${out}.cross.bin`, cross);
  writeFileSync(`${out}.json`, `${JSON.stringify(summary, null, 2)}\n`);
}
process.stdout.write(`${JSON.stringify(summary)}\n`);
