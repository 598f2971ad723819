import { Environment, type Event } from "@kb/des";
import { formatIssuePath, KbError, schemaIssueText } from "@kb/errors";
import type { OpLogger } from "@kb/oplog";
import type { TopologyGraph, TopologyNode } from "@kb/topology";
import type * as z from "zod";
import { type Component, laneWorker } from "./component.js";
import { CONTROL_BYTES, type SipLaunch } from "./control.js";
import type { ComponentDefinition } from "./define.js";
import { Fabric } from "./fabric.js";
import { ForwardingComponent } from "./forwarding-component.js";
import { type MachineStats, machineStats } from "./machine-stats.js";
import { MemoryComponent } from "./memory.js";
import type { MemoryBlock } from "./message.js";
import { ControlMessage, type PeProgram, ProgramMessage } from "./program.js";
import type { ComponentRegistry } from "./registry.js";
import type { Tracer } from "./trace.js";
import { Transfer } from "./transfer.js";

// Where these used to live, for the modules that still import them from here (tests); their home
// is @kb/topology.
export { TCM_WINDOW_BYTES, tcmAddress, tcmLocation } from "@kb/topology";

/** Options of {@link buildMachine}. */
export interface MachineOptions {
  /**
   * The impls to resolve nodes with: the framework knows no impl of its own. `defaultRegistry(plugins)`
   * of `@kb/builtins` is the built-ins plus plug-ins (already imported; see `loadPlugins` in
   * `@kb/components/node`).
   */
  readonly registry: ComponentRegistry;
  /** Op logger; hooks run only when one is given. */
  readonly opLogger?: OpLogger | null;
  /** Tracer; events are recorded only when one is given. */
  readonly tracer?: Tracer | null;
}

/** One problem with a node's params, before it is located in a file. */
export interface ParamsIssue {
  readonly nodeId: string;
  /** Path inside the node's params (`["freq_ghz"]`). */
  readonly path: readonly (string | number)[];
  readonly message: string;
}

/** Thrown by {@link buildMachine} when impl schemas reject params: every problem, by node. */
export class ComponentParamsError extends KbError {
  constructor(readonly issues: readonly ParamsIssue[]) {
    super(
      "COMPONENT_INVALID_PARAMS",
      `${issues.length} component param problem(s):\n${issues
        .map(
          (issue) =>
            `  node ${issue.nodeId}: ${formatIssuePath(["params", ...issue.path])}: ${issue.message}`,
        )
        .join("\n")}\nFix the params in the topology (pe_template/cube/sip components or overrides).`,
      issues[0] === undefined ? {} : { context: { nodeId: issues[0].nodeId } },
    );
  }
}

/** Options of {@link Machine.launch}. */
export interface LaunchOptions {
  /** PE ids (`sip0.cube1.pe3`) to run on. */
  readonly pes: readonly string[];
  /** The command list of each PE. */
  readonly program: (pe: string, index: number) => PeProgram;
  /** Name for traces and errors. */
  readonly name?: string;
}

/**
 * VA -> PA translations for the PE MMUs. While no page is mapped, addressing is physical
 * (translation is the identity; the MMU still charges its TLB timing). Once a page is mapped,
 * every DMA address must be mapped.
 */
export class PageTable {
  private readonly pages = new Map<number, number>();

  constructor(
    /** Page size in bytes. */
    readonly pageBytes: number,
  ) {}

  /** Maps `bytes` from `va` to `pa` (both page-aligned). */
  map(va: number, pa: number, bytes: number): void {
    if (va % this.pageBytes !== 0 || pa % this.pageBytes !== 0) {
      throw new KbError(
        "MACHINE_INVALID_COMMAND",
        `PageTable.map: va 0x${va.toString(16)} and pa 0x${pa.toString(16)} must be multiples of the page size ${this.pageBytes}.`,
      );
    }
    for (let offset = 0; offset < bytes; offset += this.pageBytes) {
      this.pages.set((va + offset) / this.pageBytes, pa + offset);
    }
  }

  /** Whether any page is mapped (virtual addressing). */
  get virtual(): boolean {
    return this.pages.size > 0;
  }

  /** The physical address of `va`; throws `MACHINE_INVALID_COMMAND` (page fault) when unmapped. */
  translate(va: number, where: string): number {
    if (this.pages.size === 0) return va;
    const page = Math.floor(va / this.pageBytes);
    const base = this.pages.get(page);
    if (base === undefined) {
      throw new KbError(
        "MACHINE_INVALID_COMMAND",
        `page fault: ${where} uses virtual address 0x${va.toString(16)}, which no page maps; allocate it before use.`,
      );
    }
    return base + (va - page * this.pageBytes);
  }
}

/**
 * What {@link Machine.hbmAccessObserver} is called with: one HBM block a PE_DMA reads
 * (`write` false) or writes, `rows` rows of `rowBytes` bytes `stride` bytes apart from the
 * physical device address `address` (after the PE's MMU).
 */
export type HbmAccessObserver = (
  write: boolean,
  address: number,
  rows: number,
  rowBytes: number,
  stride: number,
) => void;

/**
 * A topology instantiated as components on one DES environment: submit commands to PEs, launch
 * programs through IO_CPU and M_CPU, copy between host and HBM, run, read statistics.
 */
export class Machine {
  readonly env: Environment;
  readonly graph: TopologyGraph;
  readonly fabric: Fabric;
  readonly opLogger: OpLogger | null;
  readonly tracer: Tracer | null;
  /** The impls the machine was built from: each component's definition (counters, energy table). */
  readonly registry: ComponentRegistry;
  readonly pageTable: PageTable;
  private readonly byId = new Map<string, Component>();
  private readonly list: Component[] = [];
  private launches = 0;
  /** The keys of the launches in flight (see {@link launch}). */
  private readonly launchKeys = new Set<string>();
  private readonly sharedState = new Map<string, unknown>();
  /**
   * Called by every PE_DMA with each HBM block it reads or writes, or null (the default: no
   * call, one null check per DMA copy). `@kb/runtime` sets it during a launch to measure the
   * distinct HBM bytes the kernel touched (its minimal traffic). Never changes timing.
   */
  hbmAccessObserver: HbmAccessObserver | null = null;

  /** @internal Use {@link buildMachine}. */
  constructor(graph: TopologyGraph, options: MachineOptions, env: Environment) {
    this.env = env;
    this.graph = graph;
    this.opLogger = options.opLogger ?? null;
    this.tracer = options.tracer ?? null;
    this.registry = options.registry;
    this.pageTable = new PageTable(2 * 2 ** 20);
    this.fabric = new Fabric(graph, (id) => this.byId.get(id), env);
  }

  /** @internal */
  add(component: Component): void {
    this.byId.set(component.id, component);
    this.list.push(component);
  }

  /** Every component, in topology order. */
  get components(): readonly Component[] {
    return this.list;
  }

  /** The component of node `id`; throws `TOPOLOGY_UNKNOWN_NODE` (via the graph) when there is none. */
  component<T extends Component = Component>(id: string): T {
    const component = this.byId.get(id);
    if (component !== undefined) return component as T;
    const node = this.graph.node(id);
    throw new KbError(
      "MACHINE_INVALID_COMMAND",
      `node ${id} (kind ${node.kind}) is a container, not a component; use one of its components such as "${id}.pe_cpu".`,
    );
  }

  /**
   * State shared by several components (the compute slot of a PE that PE_GEMM and PE_MATH share):
   * created by the first caller of a key, returned to every later one.
   */
  shared<T>(key: string, create: () => T): T {
    let value = this.sharedState.get(key) as T | undefined;
    if (value === undefined) {
      value = create();
      this.sharedState.set(key, value);
    }
    return value;
  }

  /** Whether a component has this id. */
  has(id: string): boolean {
    return this.byId.has(id);
  }

  /**
   * Runs `commands` on PE `pe` (`sip0.cube0.pe3`), starting now: the PE_CPU submits them to its
   * scheduler one by one (async ones without waiting). Returns an event that succeeds when the
   * list and everything it started completed.
   */
  submit(pe: string, commands: PeProgram, name = "commands"): Event<unknown> {
    const cpu = this.component(`${pe}.pe_cpu`);
    const done = this.env.event();
    cpu.enqueue(new ProgramMessage(name, commands, 0, done, null));
    return done;
  }

  /**
   * Launches a program on PEs through the host interface (DESIGN §2): host -> IO_CPU -> each
   * cube's M_CPU -> each PE_CPU, with a global start barrier: every PE starts at the same
   * `targetStartNs` (the latest uncontended arrival of the launch), then completions aggregate
   * back PE -> M_CPU -> IO_CPU -> host. Returns an event that succeeds with the launch's end time.
   * Launches may overlap (host streams); a PE_CPU runs the programs it gets one at a time, in order.
   */
  launch(options: LaunchOptions): Event<unknown> {
    const name = options.name ?? `launch${this.launches}`;
    this.launches++;
    const bySip = new Map<number, Map<number, { pe: string; commands: PeProgram }[]>>();
    options.pes.forEach((pe, index) => {
      const node = this.graph.node(pe);
      if (node.kind !== "pe") {
        throw new KbError(
          "MACHINE_INVALID_COMMAND",
          `launch ${name}: "${pe}" is a ${node.kind}, not a PE (sip0.cube0.pe0).`,
        );
      }
      const sip = node.sip as number;
      const cube = node.cube as number;
      let cubes = bySip.get(sip);
      if (cubes === undefined) {
        cubes = new Map();
        bySip.set(sip, cubes);
      }
      const list = cubes.get(cube) ?? [];
      list.push({ pe, commands: options.program(pe, index) });
      cubes.set(cube, list);
    });
    const done = this.env.event();
    const transfer = new Transfer(this.env);
    // Launches run at once (host streams): the controllers match completions by key, so a second
    // launch of a name in flight gets a key of its own (`name~2`).
    let key = name;
    for (let copy = 2; this.launchKeys.has(key); copy++) key = `${name}~${copy}`;
    this.launchKeys.add(key);
    for (const [sip, cubes] of bySip) {
      transfer.expect();
      const request = new ControlMessage("sip_launch", key, { cubes, transfer } satisfies SipLaunch);
      this.fabric.send("host", `sip${sip}.io_cpu`, request, CONTROL_BYTES);
    }
    transfer.seal();
    transfer.done.addCallback(() => {
      this.launchKeys.delete(key);
      if (this.tracer !== null) this.tracer.record("launch_complete", this.env.now, "host", name);
      done.succeed(this.env.now);
    });
    if (this.tracer !== null) this.tracer.record("launch", this.env.now, "host", name);
    return done;
  }

  /** Copies `bytes` from the host into device memory at `address` (H2D through IO_CPU and M_CPU.DMA). */
  hostWrite(address: number, bytes: number): Event<Transfer> {
    const transfer = new Transfer(this.env);
    this.fabric.write("host", contiguous(address, bytes), transfer, "host write");
    transfer.seal();
    return transfer.done;
  }

  /** Copies `bytes` of device memory at `address` to the host (D2H). */
  hostRead(address: number, bytes: number): Event<Transfer> {
    const transfer = new Transfer(this.env);
    this.fabric.read("host", contiguous(address, bytes), transfer, "host read");
    transfer.seal();
    return transfer.done;
  }

  /**
   * Runs the simulation until nothing is left to do (or until `until` ns). Idle component workers
   * waiting for messages are not a deadlock; an `Event` from {@link submit}/{@link launch} that can
   * never complete is (`run(event)` throws `DES_DEADLOCK` with the waiting processes).
   */
  run(until?: number | Event<unknown>): void {
    try {
      this.env.run(until);
    } catch (error) {
      throw this.explainDeadlock(error);
    }
  }

  /**
   * A deadlock while a memory model holds unanswered requests, or a forwarding model holds
   * packets (held by `arrive()`, or refused at its inputs): say which, and what to fix.
   */
  private explainDeadlock(error: unknown): unknown {
    if (!(error instanceof KbError) || error.code !== "DES_DEADLOCK") return error;
    const notes: string[] = [];
    const memories = this.list.filter(
      (component): component is MemoryComponent =>
        component instanceof MemoryComponent && component.unanswered > 0,
    );
    if (memories.length > 0) {
      const which = memories
        .map((memory) => `${memory.id} (${memory.impl}): ${memory.unanswered}`)
        .join(", ");
      notes.push(
        `Memory models left requests unanswered: ${which}. A model whose service() returns undefined must call request.complete(timing) later (schedule it with context.env.timeout(ns).addCallback(...)).`,
      );
    }
    const hops: string[] = [];
    for (const component of this.list) {
      if (!(component instanceof ForwardingComponent)) continue;
      const { held, refused } = component.holding();
      const parts = [
        ...(held > 0 ? [`${held} held by arrive()`] : []),
        ...(refused > 0 ? [`${refused} refused at its inputs`] : []),
      ];
      if (parts.length > 0) hops.push(`${component.id} (${component.impl}): ${parts.join(", ")}`);
    }
    if (hops.length > 0) {
      notes.push(
        `Forwarding models hold packets: ${hops.join("; ")}. A model whose arrive() returns undefined must call context.send(packet, headNs) later, and one whose admit() refuses a packet must call context.resume(inPort) when room frees.`,
      );
    }
    if (notes.length === 0) return error;
    return new KbError("DES_DEADLOCK", `${error.detail} ${notes.join(" ")}`, {
      context: error.context,
      cause: error,
    });
  }

  /** Statistics of every component (and lane), the links that carried traffic, per-kind totals and spreads. */
  stats(): MachineStats {
    return machineStats(this.list, this.fabric.usedLinks(), this.env.now, this.env.processedEventCount);
  }
}

function contiguous(address: number, bytes: number): MemoryBlock {
  return { address, rows: 1, rowBytes: bytes, stride: bytes };
}

/**
 * Instantiates `graph` into a {@link Machine}: resolves every node's `impl` in the registry,
 * validates its params with the impl's schema (all problems at once, as a
 * `ComponentParamsError` naming node ids), creates the components, calls their `init`, and starts
 * one worker process per lane.
 *
 * Throws `COMPONENT_UNKNOWN_IMPL` (listing the impls of the kind, or when `options.registry` is
 * missing) and `COMPONENT_INVALID_PARAMS`.
 */
export function buildMachine(graph: TopologyGraph, options: MachineOptions): Machine {
  // A caller without TypeScript may still leave the registry out.
  const registry = (options as Partial<MachineOptions> | undefined)?.registry;
  if (registry === undefined) {
    throw new KbError(
      "COMPONENT_UNKNOWN_IMPL",
      "buildMachine needs options.registry, the impls to resolve the topology's nodes with: pass " +
        "{ registry: defaultRegistry(plugins) } with defaultRegistry(plugins) of @kb/builtins (the " +
        "built-in models plus your plug-ins), or a ComponentRegistry of your own.",
    );
  }
  const env = new Environment();
  const machine = new Machine(graph, options, env);
  const resolved: { node: TopologyNode; definition: ComponentDefinition; params: unknown }[] = [];
  const issues: ParamsIssue[] = [];
  for (const node of graph.nodes) {
    if (node.impl === null) continue;
    const definition = registry.resolve(node);
    const parsed = (definition.params as z.ZodType).safeParse(node.params);
    if (!parsed.success) {
      for (const issue of parsed.error.issues) {
        issues.push({
          nodeId: node.id,
          path: issue.path as (string | number)[],
          message: schemaIssueText(issue),
        });
      }
      continue;
    }
    resolved.push({ node, definition, params: parsed.data });
  }
  if (issues.length > 0) throw new ComponentParamsError(issues);
  for (const { node, definition, params } of resolved) {
    machine.add(definition.create({ env, node, machine }, params as never));
  }
  for (const component of machine.components) component.init();
  for (const component of machine.components) {
    for (const lane of component.lanes) env.process(laneWorker(component, lane), lane.inbox.name);
  }
  return machine;
}
