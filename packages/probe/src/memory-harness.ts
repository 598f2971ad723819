import { defaultRegistry } from "@kb/builtins";
import type { ComponentRegistry, KbPlugin } from "@kb/components";
import {
  buildMachine,
  CompiledPath,
  type Machine,
  type MachineOptions,
  MemoryComponent,
  Packet,
  Transfer,
} from "@kb/components";
import type { Event } from "@kb/des";
import { KbError } from "@kb/errors";
import type { TopologyGraph } from "@kb/topology";

/** What {@link MemoryHarness.request} reports. */
export interface HarnessResult {
  /** When the request reached the memory, ns. */
  readonly arrivalNs: number;
  /** When its last data left the memory (a read) or it was committed (a write), ns. */
  readonly doneNs: number;
}

/** Options of {@link MemoryHarness}. */
export interface MemoryHarnessOptions extends Omit<MachineOptions, "registry"> {
  /** The impls to build the machine with (default: `defaultRegistry(plugins)`, the built-ins plus `plugins`). */
  readonly registry?: ComponentRegistry;
  /** Plug-ins to register on the default registry (already imported). */
  readonly plugins?: readonly KbPlugin[];
  /** The memory node to drive (default `sip0.cube0.hbm`). */
  readonly memory?: string;
}

/**
 * Drives one memory model directly, without PEs or fabric: requests arrive at the memory as
 * the fabric would deliver them (one per port a block touches, with its address ranges) and the
 * harness reports when each is answered. For testing a memory model in isolation and for
 * closed-loop memory benchmarks (`pnpm bench:hbm`).
 *
 * ```ts
 * const harness = new MemoryHarness(graph);             // the graph's cube 0 HBM
 * const read = harness.request("read", 0x1000, 64);     // stack offset, bytes
 * harness.machine.run(read);
 * read.value.doneNs - read.value.arrivalNs;              // the read's latency at the memory
 * ```
 *
 * Throws `MACHINE_INVALID_COMMAND` for a block outside the stack or a memory node that is not an
 * SDK memory model.
 */
export class MemoryHarness {
  readonly machine: Machine;
  readonly memory: MemoryComponent;
  private readonly requestPaths: CompiledPath[];
  private readonly responsePaths: CompiledPath[];

  constructor(graph: TopologyGraph, options: MemoryHarnessOptions = {}) {
    const { plugins = [], registry = defaultRegistry(plugins), memory: _memory, ...rest } = options;
    this.machine = buildMachine(graph, { ...rest, registry });
    const id = options.memory ?? "sip0.cube0.hbm";
    const memory = this.machine.component(id);
    if (!(memory instanceof MemoryComponent)) {
      throw new KbError(
        "MACHINE_INVALID_COMMAND",
        `MemoryHarness: "${id}" is not a memory model (defineMemoryModel) of this machine.`,
      );
    }
    this.memory = memory;
    this.requestPaths = [];
    this.responsePaths = [];
    for (let port = 0; port < memory.ports; port++) {
      const at = { component: memory, lane: port, overheadNs: 0, links: [], passOverheadNs: 0, gate: null };
      const outside = { component: null, lane: 0, overheadNs: 0, links: [], passOverheadNs: 0, gate: null };
      this.requestPaths.push(new CompiledPath("harness", id, [outside, at], "memory", 0, Infinity));
      this.responsePaths.push(new CompiledPath(id, "harness", [at, outside], "sink", 0, Infinity));
    }
  }

  /** The memory's address mapping (HBM), as the fabric and the model use it. */
  get addressMap() {
    return this.machine.graph.hbmAddressMap();
  }

  /**
   * Whether `port` takes a request now without waiting: fewer than its `queue_depth` requests
   * wait for it. (A model that holds `maxPending` unanswered requests makes the next ones wait.)
   */
  accepts(port: number): boolean {
    return this.memory.accepts(port);
  }

  /**
   * Sends a read or write of `bytes` at stack offset `offset` to the memory now, split by port
   * as the fabric splits it; the event succeeds when every port answered.
   */
  request(kind: "read" | "write", offset: number, bytes: number): Event<HarnessResult> {
    const machine = this.machine;
    const env = machine.env;
    const transfer = new Transfer(env);
    machine.fabric.split(
      { address: offset, rows: 1, rowBytes: bytes, stride: bytes },
      offset,
      (port, share, ranges) => {
        transfer.expect();
        transfer.bytes += share;
        const path = this.requestPaths[port] as CompiledPath;
        const packet =
          kind === "read"
            ? new Packet(path, 0, transfer, this.responsePaths[port] as CompiledPath, share, null)
            : new Packet(path, share, transfer, null, 0, null);
        packet.ranges = ranges.ranges;
        packet.tailNs = env.now;
        packet.forward(this.memory);
      },
    );
    transfer.seal();
    const arrivalNs = env.now;
    const done = env.event<HarnessResult>();
    transfer.done.addCallback(() => done.succeed({ arrivalNs, doneNs: transfer.doneAt }));
    return done;
  }
}
