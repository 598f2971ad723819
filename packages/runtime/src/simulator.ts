import { defaultRegistry } from "@kb/builtins";
import { buildMachine, IpcqNetwork, type Machine } from "@kb/components";
import { MemoryStore } from "@kb/data-executor";
import type { Event } from "@kb/des";
import { KbError } from "@kb/errors";
import { type Dtype, Tensor, type TensorRandomOptions } from "@kb/tensor";
import {
  type Kernel,
  KernelHost,
  type KernelMemory,
  KernelRegistry,
  type LoadObservation,
  type RunSlices,
} from "@kb/tl";
import {
  expandTopology,
  parseTopology,
  resolveTopology,
  type Topology,
  TopologyGraph,
  type TopologyInput,
} from "@kb/topology";
import { callerLocation } from "./caller-location.js";
import { DeviceTensor, type Placement } from "./device-tensor.js";
import { energyPlanOf } from "./energy/plan.js";
import { type Grid, type GridSpec, resolveGrid } from "./grid.js";
import {
  freeOrExplain,
  hostTensorBytes,
  paramsOfShape,
  refuseDoubleFree,
  refuseFreed,
  tensorBytes,
} from "./host-checks.js";
import { HostProgress } from "./host-progress.js";
import { HostSignal, HostStreams } from "./host-streams.js";
import { createKernelMemory } from "./kernel-memory.js";
import { LaunchOverlaps, type LaunchSite, runLaunch } from "./launch-run.js";
import { checkHostDataMode, type DeferredTensor, type HostDataMode } from "./memory/deferred-data.js";
import type { DeviceMemory } from "./memory/device-memory.js";
import { HostBytes } from "./memory/host-bytes.js";
import { type HostWrite, HostWriteLog } from "./memory/host-writes.js";
import { deviceMemoryOf } from "./memory/machine-memory.js";
import { collectResults } from "./report/collect.js";
import type { LaunchRecord, RunResults } from "./results.js";
import { checkRunLimits, limitSlices } from "./run-limits.js";
import type { FreeOptions, LaunchOptions, SimulatorOptions } from "./simulator-options.js";
import { machineTracer, SiteTap } from "./sites.js";
import { explainDeadlock, machineProgress } from "./stalled-kernels.js";

export type { HostWrite } from "./memory/host-writes.js";
export type { FreeOptions, KernelInstance, LaunchOptions, SimulatorOptions } from "./simulator-options.js";

/**
 * The host side of a simulation (DESIGN §6): device memory and tensors, timed host <-> device
 * copies, kernel launches on a grid of PEs, and the results. Every `await` runs the simulated
 * machine until that operation completes; operations run one after another, like a host program
 * on a single stream.
 */
export class Simulator {
  readonly machine: Machine;
  readonly topologyName: string;
  /**
   * Byte-addressable device memory (real bytes of loads, stores and host copies), in 16 KiB pages:
   * a kernel's scratch is a few KiB in each of thousands of TCMs (64 KiB pages made 512 MiB of the
   * 8192-PE `bench:scale` run's memory).
   */
  readonly memory = new MemoryStore({ pageBytes: 16384 });
  /** Allocators of HBM, SRAM and TCM. */
  readonly device: DeviceMemory;
  /** Kernels launched so far by name (last launch wins). */
  readonly kernels = new KernelRegistry();
  /**
   * Host writes in order (the initial data of phase 2): copies to the device, and the zeros of
   * freed and reused memory (`zeroBytes`). Beyond `SimulatorOptions.hostWriteMemoryBytes` their
   * bytes are in a temporary file, read back by `bytes`.
   */
  readonly hostWrites: HostWrite[];
  /**
   * Every `tl.load` the kernels completed, in order, with a copy of the bytes each received;
   * filled only with `SimulatorOptions.checkPhases` (empty otherwise). `comparePhases` checks
   * them against phase 2.
   */
  readonly loadObservations: LoadObservation[] = [];
  /** What copies of deferred tensors do with their bytes (`SimulatorOptions.hostData`). */
  readonly hostData: HostDataMode;
  /** Phase 1's bytes, pending and timing-only ranges and the host-write log, kept in step. */
  private readonly bytes: HostBytes;
  private readonly checkPhases: boolean;
  private readonly host: KernelHost;
  /** How `drive` slices the run: the limits' checks and the event loop's turns between slices. */
  private readonly slices: RunSlices;
  private readonly launches: LaunchRecord[] = [];
  /** @internal The plan the host program states with {@link progress}, for progress displays. */
  readonly plan = new HostProgress();
  /** The per-line tallies (sites.ts), when the machine's tracer is a SiteTap. */
  private readonly sites: SiteTap | null;
  private readonly hostCopies = { count: 0, bytes: 0, ns: 0 };
  private readonly scratchBytes: number | undefined;
  private readonly dispatchCycles: number;
  /** The host streams running ({@link streams}), else null. */
  private hostStreams: HostStreams | null = null;
  /** What a launch needs of this simulator (launch-run.ts). */
  private readonly launchSite: LaunchSite;
  private failed: unknown = null;
  private tensors = 0;
  private benchParams: Readonly<Record<string, unknown>> = {};

  /**
   * Builds the machine of a topology: YAML text, a topology object, or an expanded graph, with
   * the plug-ins of `options.plugins` (loaded `KbPlugin` objects). Runs anywhere; a topology file
   * path, plug-ins by package name and host writes spilled to a temporary file are Node's, in
   * `loadSimulator` of `@kb/runtime/node`.
   *
   * Throws `RUNTIME_INVALID` for a file path or a plug-in name, and the topology's validation
   * errors (`TOPOLOGY_YAML_SYNTAX`, `TOPOLOGY_INVALID`).
   */
  static async fromTopology(
    topology: string | TopologyInput | TopologyGraph,
    options: SimulatorOptions = {},
  ): Promise<Simulator> {
    const named = (options.plugins ?? []).filter((plugin) => typeof plugin === "string");
    if (named.length > 0) {
      throw new KbError(
        "RUNTIME_INVALID",
        `plug-ins by package name (${named.map((name) => JSON.stringify(name)).join(", ")}) are imported on Node: use loadSimulator of @kb/runtime/node, or pass the loaded KbPlugin objects.`,
      );
    }
    let graph: TopologyGraph;
    if (topology instanceof TopologyGraph) graph = topology;
    else if (typeof topology === "string") graph = expandTopology(parseTopologyText(topology));
    else graph = expandTopology(resolveTopology(topology));
    const machine = buildMachine(graph, {
      registry: defaultRegistry(options.plugins ?? []),
      opLogger: options.opLogger ?? null,
      tracer: machineTracer(options),
    });
    return new Simulator(machine, graph.topology.name, options);
  }

  /** Wraps a machine you built yourself. */
  constructor(machine: Machine, topologyName: string, options: SimulatorOptions = {}) {
    this.machine = machine;
    this.topologyName = topologyName;
    // The energy tables with the topology's costs: an unknown cost fails here, before anything runs.
    energyPlanOf(machine);
    this.host = new KernelHost(machine.env);
    this.sites = machine.tracer instanceof SiteTap ? machine.tracer : null;
    this.scratchBytes = options.scratchBytes;
    this.dispatchCycles = options.dispatchCycles ?? 0;
    this.checkPhases = options.checkPhases ?? false;
    const hostWriteMemoryBytes = options.hostWriteMemoryBytes ?? 256 * 2 ** 20;
    if (!(hostWriteMemoryBytes >= 0)) {
      throw new KbError(
        "RUNTIME_INVALID",
        `hostWriteMemoryBytes must be a number of bytes >= 0 (Infinity keeps every host write in memory), got ${String(hostWriteMemoryBytes)}.`,
      );
    }
    const hostLog = new HostWriteLog(hostWriteMemoryBytes, options.hostWriteFile ?? null);
    this.hostData = checkHostDataMode(options.hostData);
    this.bytes = new HostBytes(this.memory, hostLog, this.hostData);
    checkRunLimits(options.limits ?? {});
    this.slices = limitSlices(
      this.host,
      options.limits ?? {},
      () => performance.now(),
      () => machineProgress(machine),
    );
    this.hostWrites = hostLog.entries;
    IpcqNetwork.of(machine).hooks = { deliver: (slot, bytes) => this.memory.write(slot, bytes) };
    this.device = deviceMemoryOf(machine, options.pageBytes);
    this.launchSite = {
      machine,
      device: this.device,
      host: this.host,
      kernels: this.kernels,
      sites: this.sites,
      scratchBytes: this.scratchBytes,
      dispatchCycles: this.dispatchCycles,
      overlaps: new LaunchOverlaps(),
      grid: (spec) => this.grid(spec),
      kernelMemory: () => this.kernelMemory(),
      drive: (event, what) => this.drive(event, what),
      forget: (address, bytes) => this.forget(address, bytes),
      keep: (record) => {
        this.launches.push(record);
      },
    };
  }

  /** Simulated time now, ns. */
  get now(): number {
    return this.machine.env.now;
  }

  // ---------------------------------------------------------------------------------------------
  // Host tensors

  // Host tensors are checked arithmetically before they are made (hostTensorBytes).

  /** A host tensor of uniform random values, reproducible from `seed`. */
  random(shape: readonly number[], dtype: Dtype, options: TensorRandomOptions = {}): Tensor {
    hostTensorBytes("random", shape, dtype, () => this.sizeNote(shape));
    return Tensor.random(shape, dtype, options);
  }

  /** A host tensor from values (rounded to `dtype`). */
  fromArray(values: ArrayLike<number>, shape: readonly number[], dtype: Dtype): Tensor {
    hostTensorBytes("fromArray", shape, dtype, () => this.sizeNote(shape));
    return Tensor.fromArray(values, shape, dtype);
  }

  /** A host tensor of zeros. */
  zeros(shape: readonly number[], dtype: Dtype): Tensor {
    hostTensorBytes("zeros", shape, dtype, () => this.sizeNote(shape));
    return Tensor.zeros(shape, dtype);
  }

  /** @internal The params of the bench this simulator runs (`runBenchCore`), for size messages. */
  useBenchParams(params: Readonly<Record<string, unknown>>): void {
    this.benchParams = params;
  }

  private sizeNote(shape: readonly number[]): string {
    const where = callerLocation();
    return `${paramsOfShape(this.benchParams, shape)}${where === null ? "" : ` (at ${where})`}`;
  }

  // ---------------------------------------------------------------------------------------------
  // Device memory

  /**
   * Allocates a device tensor (zeros; takes no simulated time) in the HBM of cube `cube` of SIP
   * `sip` (default 0, 0), or in its shared SRAM with `space: "sram"`. The shape and dtype are
   * checked and the size computed arithmetically, before any memory is touched; the allocator
   * records the tensor's name, dtype and shape (see `kernelMemory().tensorAt`).
   *
   * Throws `RUNTIME_INVALID` for an unknown dtype, `TENSOR_INVALID` for a shape that is not a list
   * of integers >= 0 or whose size is beyond 2^53 - 1, and `MEMORY_ALLOCATION` when the tensor is
   * larger than that memory or its free space (naming the sizes and what to do).
   */
  empty(
    shape: readonly number[],
    dtype: Dtype,
    where: Partial<Placement> & { name?: string } = {},
  ): DeviceTensor {
    this.usable();
    const name = where.name ?? `t${this.tensors}`;
    const bytes = tensorBytes("empty", name, shape, dtype);
    const place = { sip: where.sip ?? 0, cube: where.cube ?? 0 };
    const tensor = { dtype, shape };
    const address =
      where.space === "sram"
        ? this.device.allocSram(Math.max(1, bytes), place, name, tensor)
        : this.device.allocHbm(Math.max(1, bytes), place, name, tensor);
    if (where.name === undefined) this.tensors++;
    // Memory used before may hold old bytes: zero it in both phases (a host write of zeros, so
    // phase 2 starts this tensor from zeros too). `free` forgets a tensor's bytes in both phases.
    this.bytes.allocated(address, bytes, this.now);
    return new DeviceTensor(address, shape, dtype, name, callerLocation());
  }

  /**
   * Copies a host tensor to a new device tensor through IO_CPU -> M_CPU.DMA -> HBM (timed).
   * Throws as {@link empty} and {@link copyToDevice} do.
   */
  async toDevice(
    tensor: Tensor | DeferredTensor,
    where: Partial<Placement> & { name?: string } = {},
  ): Promise<DeviceTensor> {
    const device = this.empty(tensor.shape, tensor.dtype, where);
    await this.copyToDevice(tensor, device);
    return device;
  }

  /**
   * Copies a host tensor into an existing device tensor (timed).
   *
   * Throws `MEMORY_ACCESS` when `device` was freed (naming where), `RUNTIME_INVALID` when the
   * dtypes or sizes differ; nothing is written then.
   */
  async copyToDevice(tensor: Tensor | DeferredTensor, device: DeviceTensor): Promise<void> {
    this.usable();
    refuseFreed(
      "copyToDevice",
      device,
      "written",
      "Copy into a live tensor (sim.empty or sim.toDevice make one)",
    );
    if (tensor.nbytes !== device.nbytes || tensor.dtype !== device.dtype) {
      throw new KbError(
        "RUNTIME_INVALID",
        `copyToDevice: host ${tensor} does not match ${device.describeOrigin()}; shapes and dtypes must agree.`,
      );
    }
    const { address } = device;
    const nbytes = this.bytes.copyIn(tensor, address, device.name, callerLocation(), this.now);
    await this.hostCopy(this.machine.hostWrite(address, nbytes), nbytes);
  }

  /**
   * Copies a device tensor to the host (timed). In phase 1 the bytes are what loads, stores and
   * host copies moved; results of compute ops are written only when phase 2 replays them (phase 1
   * holds no bytes where it does not know them: such bytes read as stale values or zeros).
   *
   * Throws `MEMORY_ACCESS` when `device` was freed, naming where.
   */
  async fromDevice(device: DeviceTensor): Promise<Tensor> {
    this.usable();
    refuseFreed("fromDevice", device, "read", "Read a tensor before freeing it");
    await this.hostCopy(this.machine.hostRead(device.address, device.nbytes), device.nbytes);
    return new Tensor(device.shape, device.dtype, this.memory.read(device.address, device.nbytes));
  }

  /**
   * Frees a device tensor and remembers where: the caller's `file:line:col` (the first stack
   * frame outside the `@kb` packages), which later errors about the tensor name (`copyToDevice`,
   * `fromDevice`, `free`, `launch` args, `verifyOutcome`, and a kernel's access to its memory).
   *
   * Its bytes are released in both phases: phase 1 drops them now, and phase 2 (which replays the
   * run later) drops them at this point of the replay (a host write of zeros, `zeroBytes`), so
   * memory in both scales with the tensors alive rather than with all ever allocated. With
   * `{ reuse: false }` its addresses are not allocated again (see {@link FreeOptions}).
   *
   * Throws `MEMORY_ALLOCATION` for a second free (naming where the first was) or a tensor this
   * simulator did not allocate, naming the tensor and where it was allocated.
   */
  free(device: DeviceTensor, options: FreeOptions = {}): void {
    refuseDoubleFree(device);
    const at = callerLocation();
    freeOrExplain(this.device, device, at, options);
    device.markFreed(at);
    this.forget(device.address, device.nbytes);
  }

  // ---------------------------------------------------------------------------------------------
  // Kernels

  /** Resolves a grid: every PE by default; numbers take the first n, arrays pick indices. */
  grid(spec: GridSpec = {}): Grid {
    return resolveGrid(spec, this.machine.graph.topology, this.topologyName);
  }

  /**
   * Launches `kernel` on the PEs of the grid through IO_CPU -> M_CPU -> PE_CPU with the global
   * start barrier, and runs the machine until the launch completes. Each program gets its own `tl`
   * and the TCM scratch its PE took for the launch.
   *
   * Persistent (the default): one program per PE, whose program ids are the PE's grid position.
   * Logical (`programs: [nx, ny?, nz?]`, Triton's grid): nx x ny x nz programs with logical ids,
   * dispatched onto the grid's PEs by the block scheduler of program-grid.ts; a program may not
   * use `tl.send` / `tl.recv` (docs/latency-model.md section 6).
   *
   * Throws `RUNTIME_INVALID` for a `programs` that is not 1 to 3 integers >= 1, and
   * `MEMORY_ACCESS` before anything runs when a device tensor among `args` (or in an array or
   * plain object among them) was freed, naming the argument and where it was freed.
   */
  async launch<Args extends readonly unknown[]>(
    kernel: Kernel<Args>,
    options: LaunchOptions<Args>,
  ): Promise<LaunchRecord> {
    this.usable();
    return runLaunch(this.launchSite, kernel, options);
  }

  /**
   * Runs host tasks as streams (as CUDA streams are): each task's simulator operations (launches,
   * host copies, {@link signal} waits) run one after another, and the tasks' operations run at
   * the same simulated time, contending for the machine. A stream goes on at the simulated time
   * its operation ends; the order is deterministic (streams start in the order given). Resolves
   * with the tasks' results when all have ended, at the simulated time the last one ends.
   *
   * A stream may call `streams` itself (its tasks join the running ones and it waits for them).
   * While streams run, only they use the simulator: the host program awaits `streams`. A stream
   * waits for another through a {@link HostSignal} (`sim.signal()`), and awaits a promise another
   * stream settles through {@link waitFor}: a plain `await` of it holds the streams' driver, which
   * stops with `RUNTIME_INVALID` after 60 s of wall time.
   *
   * The records of launches that overlap name each other (`overlaps`); a launch's work, roofline
   * and verdict are measured over its window, so they include the overlapping launches' work.
   * Throws what a stream throws (the simulator is then stopped, as after a failed operation), and
   * `DES_DEADLOCK` naming what the streams wait for when nothing can end their waits.
   */
  async streams<T>(tasks: readonly (() => Promise<T>)[]): Promise<T[]> {
    this.usable();
    const running = this.hostStreams;
    if (running !== null) return running.nest(tasks);
    const streams = new HostStreams(this.machine.env, this.host);
    this.hostStreams = streams;
    try {
      const all = Promise.all(tasks.map((task) => streams.start(task)));
      await streams.drive(all, this.slices);
      return await all;
    } catch (error) {
      // Streams may still wait on the machine: this simulator cannot be used again.
      this.failed = explainDeadlock(this.host, error);
      throw this.failed;
    } finally {
      this.hostStreams = null;
    }
  }

  /**
   * From a host stream ({@link streams}): awaits `promise`, which another stream settles (an
   * operation it started, such as a shared launch), with this stream counted as waiting on the
   * simulator meanwhile, so the engine runs on; a plain `await` of such a promise would hold the
   * streams' driver (it waits for every stream to reach the simulator). Outside streams, returns
   * `promise`.
   */
  waitFor<T>(promise: Promise<T>): Promise<T> {
    return this.hostStreams === null ? promise : this.hostStreams.external(promise);
  }

  /**
   * A signal for host streams ({@link streams}): one stream fires it (`signal.fire()`, no
   * simulated time), another waits for it (`await signal.wait()`) and goes on at the simulated
   * time it fired. `name` says what it stands for in a deadlock's message.
   */
  signal(name = "signal"): HostSignal {
    return new HostSignal(name, this.machine.env.event(), (signal) =>
      this.drive(signal.event, `signal "${signal.name}"`),
    );
  }

  /**
   * States where the host program is in its own plan: `done` of `total` steps (launches, layers,
   * sizes), with an optional `label`. kb run and the playground show it with a wall-time ETA; the
   * simulation does not read it. A `done` outside 0..total or a `total` not above 0 is `RUNTIME_INVALID`.
   */
  progress(done: number, total: number, label?: string): void {
    this.plan.report(done, total, label, this.machine.env.now);
  }

  /**
   * The results so far (simulated time, work, peaks, utilisation, energy); `tokens`, when the
   * bench says how many it processed, gives the energy's J per token.
   */
  results(
    bench: string | null = null,
    params: Record<string, unknown> = {},
    tokens: number | null = null,
  ): RunResults {
    return collectResults(
      this.machine,
      this.topologyName,
      this.launches,
      this.hostCopies,
      bench,
      params,
      tokens,
    );
  }

  // ---------------------------------------------------------------------------------------------

  /** Runs a host copy of `bytes` bytes to its end and counts it in the results' `hostCopies`. */
  private async hostCopy(copy: Event<unknown>, bytes: number): Promise<void> {
    const startNs = this.now;
    await this.drive(copy, `a host copy of ${bytes} B`);
    this.hostCopies.count++;
    this.hostCopies.bytes += bytes;
    this.hostCopies.ns += this.now - startNs;
  }

  /** Forgets the bytes of a freed range in both phases: now in phase 1, at this time in phase 2. */
  private forget(address: number, bytes: number): void {
    this.bytes.forget(address, bytes, this.now);
  }

  private usable(): void {
    if (this.failed !== null) {
      throw new KbError(
        "RUNTIME_INVALID",
        "this simulator stopped at an error earlier (see that error); build a new one to run again.",
        { cause: this.failed },
      );
    }
  }

  /**
   * Runs the machine until `event` is processed (kernels interleaving). Progress: pass a tracer
   * (`SimulatorOptions.tracer`) and watch its events; nothing here adds simulation events. A
   * deadlock with kernels running throws `DES_DEADLOCK` leading with them (stalled-kernels.ts).
   */
  private async drive(event: Event<unknown>, what = "a host operation"): Promise<void> {
    // In a host stream, the streams' driver runs the machine.
    if (this.hostStreams !== null) {
      await this.hostStreams.wait(event, what);
      return;
    }
    try {
      await this.host.run(event, this.slices);
    } catch (error) {
      this.failed = explainDeadlock(this.host, error);
      throw this.failed;
    }
  }

  /**
   * The device memory as a kernel's `tl` sees it (`launch` gives it to every instance): `check`
   * that an HBM/SRAM range lies in one live allocation (TCM is the kernel's own scratch), `read`
   * and `write` the bytes, and `tensorAt`, the device tensor holding an address (name, dtype,
   * shape, address, bytes; null for TCM and free memory).
   *
   * Pending bytes (ADR-0020 D3): `markPending(address, length)` records that a range holds a
   * value phase 1 does not know (a compute result, a store of one); `write` makes the bytes it
   * writes known again, as does a host copy; `isPending(address, length)` is true when any byte
   * of the range is pending (O(log n) in the pending intervals; O(1) when there are none). The
   * state belongs to the simulator, so it carries over from one launch to the next.
   *
   * With `SimulatorOptions.checkPhases`, `observeLoad` keeps each completed load, with a copy of
   * its bytes, in {@link loadObservations}; without, there is no `observeLoad`.
   *
   * `check` throws `MEMORY_ACCESS` naming the range and the nearest allocation, or the freed
   * tensor it hits and where it was freed.
   */
  kernelMemory(): KernelMemory {
    return createKernelMemory({
      store: this.memory,
      device: this.device,
      pending: this.bytes.pending,
      timingOnly: this.bytes.timingOnly,
      observations: this.checkPhases ? this.loadObservations : null,
    });
  }
}

/**
 * Parses a topology given as YAML text; a one-line string that is not a YAML mapping is taken
 * for what it most likely is, a file path, and refused with the way to load one.
 */
function parseTopologyText(text: string): Topology {
  if (!text.includes("\n") && !text.includes(":")) {
    throw new KbError(
      "RUNTIME_INVALID",
      `Simulator.fromTopology takes YAML text, a topology object or a graph; "${text}" looks like a file path: load a topology file with loadSimulator of @kb/runtime/node (Node), or read the file and pass its text.`,
    );
  }
  return parseTopology(text);
}
