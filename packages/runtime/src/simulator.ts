import {
  buildMachine,
  defaultRegistry,
  IpcqNetwork,
  ipcqRegionBytes,
  type KbPlugin,
  type Machine,
  TCM_WINDOW_BYTES,
  type Tracer,
  tcmAddress,
} from "@kb/components";
import { MemoryStore } from "@kb/data-executor";
import type { Event } from "@kb/des";
import { KbError } from "@kb/errors";
import type { OpLogger } from "@kb/oplog";
import { type Dtype, isDtype, Tensor, type TensorRandomOptions } from "@kb/tensor";
import {
  type Kernel,
  KernelHost,
  type KernelMemory,
  type KernelPlacement,
  KernelRegistry,
  KernelRunner,
} from "@kb/tl";
import {
  decodeAddress,
  expandTopology,
  resolveTopology,
  TopologyGraph,
  type TopologyInput,
} from "@kb/topology";
import { DeviceTensor, type Placement } from "./device-tensor.js";
import { DeviceMemory } from "./memory/allocator.js";
import { collectResults, type LaunchRecord, type RunResults, snapshotWork, workSince } from "./results.js";

/** Options of {@link Simulator.fromTopology}. */
export interface SimulatorOptions {
  /**
   * Plug-ins: loaded `KbPlugin` objects, or package names (imported from the working directory
   * when the topology is a file; a topology file's own `plugins:` are always loaded).
   */
  readonly plugins?: readonly (KbPlugin | string)[];
  /** Records the op log (phase 2 replays it). */
  readonly opLogger?: OpLogger | null;
  /** Records trace events (Chrome trace JSON). */
  readonly tracer?: Tracer | null;
  /** HBM page size of device allocations (default 2 MiB). */
  readonly pageBytes?: number;
  /** TCM scratch per PE for a kernel's loaded tiles and compute outputs (default: 2 MiB, or what fits). */
  readonly scratchBytes?: number;
  /** PE_CPU cycles per tl call that emits a command (ADR-0046 D6; default 0). */
  readonly dispatchCycles?: number;
}

/** Which PEs a launch runs on: a count (the first n) or explicit indices per level; default all. */
export interface GridSpec {
  readonly sips?: number | readonly number[];
  readonly cubes?: number | readonly number[];
  readonly pes?: number | readonly number[];
}

/** A resolved grid: the PEs of a launch and each one's program ids. */
export interface Grid {
  readonly sips: readonly number[];
  readonly cubes: readonly number[];
  readonly pes: readonly number[];
  /** Kernel instances: sips x cubes x pes. */
  readonly size: number;
}

/** Options of {@link Simulator.launch}. */
export interface LaunchOptions<Args extends readonly unknown[]> {
  /** Where to run (default: every PE of the topology). */
  readonly grid?: Grid | GridSpec;
  /** The kernel's arguments after `tl`. */
  readonly args: Args;
  /** Name in the kernel registry, traces and errors (default: the function's name). */
  readonly name?: string;
}

/** Host data written to the device: phase 2 starts from these (ADR-0020 D7, host injection). */
export interface HostWrite {
  readonly address: number;
  readonly bytes: Uint8Array;
  /** Simulated time of the write (phase 2 applies it before the ops that started later). */
  readonly atNs: number;
}

/**
 * The host side of a simulation (DESIGN §6): device memory and tensors, timed host <-> device
 * copies, kernel launches on a grid of PEs, and the results. Every `await` runs the simulated
 * machine until that operation completes; operations run one after another, like a host program
 * on a single stream.
 */
export class Simulator {
  readonly machine: Machine;
  readonly topologyName: string;
  /** Byte-addressable device memory (real bytes of loads, stores and host copies). */
  readonly memory = new MemoryStore();
  /** Allocators of HBM, SRAM and TCM. */
  readonly device: DeviceMemory;
  /** Kernels launched so far by name (last launch wins). */
  readonly kernels = new KernelRegistry();
  /** Host writes in order (the initial data of phase 2). */
  readonly hostWrites: HostWrite[] = [];
  private readonly host: KernelHost;
  private readonly launches: LaunchRecord[] = [];
  private readonly scratchBytes: number | undefined;
  private readonly dispatchCycles: number;
  private failed: unknown = null;
  private tensors = 0;

  /** Builds the machine of a topology: a YAML file path, a topology object, or an expanded graph. */
  static async fromTopology(
    topology: string | TopologyInput | TopologyGraph,
    options: SimulatorOptions = {},
  ): Promise<Simulator> {
    const loaded = (options.plugins ?? []).filter((plugin): plugin is KbPlugin => typeof plugin !== "string");
    const named = (options.plugins ?? []).filter((plugin): plugin is string => typeof plugin === "string");
    if (typeof topology === "string") {
      const { buildMachineFromFile } = await import("@kb/components/node");
      if (loaded.length > 0) {
        throw new KbError(
          "RUNTIME_INVALID",
          "plug-in objects cannot be combined with a topology file; pass package names (the file's plugins: are loaded too).",
        );
      }
      const { machine, topology: resolved } = await buildMachineFromFile(topology, {
        plugins: named,
        opLogger: options.opLogger ?? null,
        tracer: options.tracer ?? null,
      });
      return new Simulator(machine, resolved.name, options);
    }
    if (named.length > 0) {
      const { loadPlugins } = await import("@kb/components/node");
      loaded.push(...(await loadPlugins(named, { from: globalThis.process?.cwd?.() ?? "." })));
    }
    const graph = topology instanceof TopologyGraph ? topology : expandTopology(resolveTopology(topology));
    const machine = buildMachine(graph, {
      registry: defaultRegistry(loaded),
      opLogger: options.opLogger ?? null,
      tracer: options.tracer ?? null,
    });
    return new Simulator(machine, graph.topology.name, options);
  }

  /** Wraps a machine you built yourself. */
  constructor(machine: Machine, topologyName: string, options: SimulatorOptions = {}) {
    this.machine = machine;
    this.topologyName = topologyName;
    this.host = new KernelHost(machine.env);
    this.scratchBytes = options.scratchBytes;
    this.dispatchCycles = options.dispatchCycles ?? 0;
    const topology = machine.graph.topology;
    const pe0 = "sip0.cube0.pe0";
    const tcm = machine.has(`${pe0}.pe_tcm`)
      ? Number((machine.component(`${pe0}.pe_tcm`).params as Record<string, unknown>).capacity_bytes)
      : NaN;
    const reserved = machine.has(`${pe0}.pe_scheduler`)
      ? Number(
          (machine.component(`${pe0}.pe_scheduler`).params as Record<string, unknown>).reserved_tcm_bytes,
        )
      : NaN;
    // The end of each PE's TCM holds its IPCQ slots; phase 1 delivers payload bytes there.
    const cpu = machine.has(`${pe0}.pe_cpu`)
      ? (machine.component(`${pe0}.pe_cpu`).params as Record<string, unknown>)
      : {};
    const ipcqBytes =
      cpu.ipcq_slots === undefined ? 0 : ipcqRegionBytes(Number(cpu.ipcq_slots), Number(cpu.ipcq_slot_bytes));
    IpcqNetwork.of(machine).hooks = { deliver: (slot, bytes) => this.memory.write(slot, bytes) };
    this.device = new DeviceMemory({
      sips: topology.system.sips,
      cubesPerSip: topology.sip.cubes,
      pesPerCube: topology.cube.noc.rows * topology.cube.noc.cols,
      hbmBytesPerCube: topology.cube.hbm.capacity_bytes,
      sramBytesPerCube: topology.cube.sram.capacity_bytes,
      tcmBytesPerPe: (Number.isFinite(tcm) ? tcm : 4 * 2 ** 20) - ipcqBytes,
      ...(options.pageBytes !== undefined ? { pageBytes: options.pageBytes } : {}),
      ...(Number.isFinite(reserved) ? { tcmReservedBytes: reserved } : {}),
    });
  }

  /** Simulated time now, ns. */
  get now(): number {
    return this.machine.env.now;
  }

  // ---------------------------------------------------------------------------------------------
  // Host tensors

  /** A host tensor of uniform random values, reproducible from `seed`. */
  random(shape: readonly number[], dtype: Dtype, options: TensorRandomOptions = {}): Tensor {
    return Tensor.random(shape, dtype, options);
  }

  /** A host tensor from values (rounded to `dtype`). */
  fromArray(values: ArrayLike<number>, shape: readonly number[], dtype: Dtype): Tensor {
    return Tensor.fromArray(values, shape, dtype);
  }

  /** A host tensor of zeros. */
  zeros(shape: readonly number[], dtype: Dtype): Tensor {
    return Tensor.zeros(shape, dtype);
  }

  // ---------------------------------------------------------------------------------------------
  // Device memory

  /** Allocates a device tensor (zeros; takes no simulated time). */
  empty(
    shape: readonly number[],
    dtype: Dtype,
    where: Partial<Placement> & { name?: string } = {},
  ): DeviceTensor {
    this.usable();
    if (!isDtype(dtype)) {
      throw new KbError(
        "RUNTIME_INVALID",
        `empty: unknown dtype ${JSON.stringify(dtype)}; use f32, f16, bf16, i8 or i32.`,
      );
    }
    const probe = Tensor.zeros(shape, dtype); // validates the shape
    const name = where.name ?? `t${this.tensors++}`;
    const place = { sip: where.sip ?? 0, cube: where.cube ?? 0 };
    const bytes = Math.max(1, probe.nbytes);
    const address =
      where.space === "sram"
        ? this.device.allocSram(bytes, place, name)
        : this.device.allocHbm(bytes, place, name);
    return new DeviceTensor(address, shape, dtype, name);
  }

  /** Copies a host tensor to a new device tensor through IO_CPU -> M_CPU.DMA -> HBM (timed). */
  async toDevice(tensor: Tensor, where: Partial<Placement> & { name?: string } = {}): Promise<DeviceTensor> {
    const device = this.empty(tensor.shape, tensor.dtype, where);
    await this.copyToDevice(tensor, device);
    return device;
  }

  /** Copies a host tensor into an existing device tensor (timed). */
  async copyToDevice(tensor: Tensor, device: DeviceTensor): Promise<void> {
    this.usable();
    if (tensor.nbytes !== device.nbytes || tensor.dtype !== device.dtype) {
      throw new KbError(
        "RUNTIME_INVALID",
        `copyToDevice: host ${tensor} does not match ${device.describe()}; shapes and dtypes must agree.`,
      );
    }
    const bytes = tensor.bytes.slice();
    this.memory.write(device.address, bytes);
    this.hostWrites.push({ address: device.address, bytes, atNs: this.now });
    await this.drive(this.machine.hostWrite(device.address, device.nbytes));
  }

  /**
   * Copies a device tensor to the host (timed). In phase 1 the bytes are what loads, stores and
   * host copies moved; results of compute ops are written only when phase 2 replays them.
   */
  async fromDevice(device: DeviceTensor): Promise<Tensor> {
    this.usable();
    await this.drive(this.machine.hostRead(device.address, device.nbytes));
    return new Tensor(device.shape, device.dtype, this.memory.read(device.address, device.nbytes));
  }

  /** Frees a device tensor (a second free, or a tensor of another simulator, is an error). */
  free(device: DeviceTensor): void {
    this.device.free(device.address);
  }

  // ---------------------------------------------------------------------------------------------
  // Kernels

  /** Resolves a grid: every PE by default; numbers take the first n, arrays pick indices. */
  grid(spec: GridSpec = {}): Grid {
    const topology = this.machine.graph.topology;
    const pick = (what: string, value: number | readonly number[] | undefined, limit: number): number[] => {
      if (value === undefined) return Array.from({ length: limit }, (_, i) => i);
      const list = typeof value === "number" ? Array.from({ length: value }, (_, i) => i) : [...value];
      if (
        list.length === 0 ||
        (typeof value === "number" && (!Number.isInteger(value) || value > limit)) ||
        list.some((i) => !Number.isInteger(i) || i < 0 || i >= limit) ||
        new Set(list).size !== list.length
      ) {
        throw new KbError(
          "RUNTIME_INVALID",
          `grid ${what}: ${JSON.stringify(value)} is not a count 1..${limit} or a list of distinct indices 0..${limit - 1} (topology ${this.topologyName} has ${limit}).`,
        );
      }
      return list;
    };
    const sips = pick("sips", spec.sips, topology.system.sips);
    const cubes = pick("cubes", spec.cubes, topology.sip.cubes);
    const pes = pick("pes", spec.pes, topology.cube.noc.rows * topology.cube.noc.cols);
    return { sips, cubes, pes, size: sips.length * cubes.length * pes.length };
  }

  /**
   * Launches `kernel` on every PE of the grid through IO_CPU -> M_CPU -> PE_CPU with the global
   * start barrier, and runs the machine until the launch completes. Each instance gets its own
   * `tl` (program ids from its grid position) and TCM scratch.
   */
  async launch<Args extends readonly unknown[]>(
    kernel: Kernel<Args>,
    options: LaunchOptions<Args>,
  ): Promise<LaunchRecord> {
    this.usable();
    const name = options.name ?? (kernel.name || "kernel");
    this.kernels.define(name, kernel as Kernel);
    const grid = isGrid(options.grid) ? options.grid : this.grid(options.grid ?? {});
    const placements: KernelPlacement[] = [];
    grid.sips.forEach((sip, sipIndex) => {
      grid.cubes.forEach((cube, cubeIndex) => {
        grid.pes.forEach((pe, peIndex) => {
          placements.push({
            pe: `sip${sip}.cube${cube}.pe${pe}`,
            sip,
            cube,
            peIndex: pe,
            programId: [peIndex, cubeIndex, sipIndex],
            numPrograms: [grid.pes.length, grid.cubes.length, grid.sips.length],
          });
        });
      });
    });
    const memory = this.kernelMemory();
    const scratch: number[] = [];
    const runners: KernelRunner[] = [];
    try {
      for (const placement of placements) {
        const bytes = this.scratchFor(placement);
        const address = this.device.allocTcm(
          bytes,
          { sip: placement.sip, cube: placement.cube, pe: placement.peIndex },
          `${name} scratch`,
        );
        scratch.push(address);
        const offset = address - tcmAddress(placement.sip, placement.cube, placement.peIndex, 0);
        runners.push(
          new KernelRunner(this.host, kernel as Kernel, options.args, {
            kernel: name,
            placement,
            scratch: { offset, bytes },
            dispatchCycles: this.dispatchCycles,
            memory,
          }),
        );
      }
      const startNs = this.now;
      const before = snapshotWork(this.machine);
      const done = this.machine.launch({
        pes: placements.map((placement) => placement.pe),
        program: (_pe, index) => runners[index] as KernelRunner,
        name,
      });
      await this.drive(done);
      const record: LaunchRecord = {
        name,
        pes: placements.length,
        startNs,
        endNs: this.now,
        ...workSince(this.machine, before),
      };
      this.launches.push(record);
      return record;
    } finally {
      for (const address of scratch) this.device.free(address);
    }
  }

  /** The results so far (simulated time, work, peaks, utilisation). */
  results(bench: string | null = null, params: Record<string, unknown> = {}): RunResults {
    return collectResults(this.machine, this.topologyName, this.launches, bench, params);
  }

  // ---------------------------------------------------------------------------------------------

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
   * (`SimulatorOptions.tracer`) and watch its events; nothing here adds simulation events.
   */
  private async drive(event: Event<unknown>): Promise<void> {
    try {
      await this.host.run(event);
    } catch (error) {
      this.failed = error;
      throw error;
    }
  }

  private kernelMemory(): KernelMemory {
    const store = this.memory;
    const device = this.device;
    return {
      check: (address, length, what) => {
        if (decodeAddress(address).space === "tcm") return;
        device.checkAccess(address, length, what);
      },
      read: (address, length) => store.read(address, length),
      write: (address, bytes) => store.write(address, bytes),
    };
  }

  private scratchFor(placement: KernelPlacement): number {
    if (this.scratchBytes !== undefined) return this.scratchBytes;
    const { tcmBytesPerPe, tcmReservedBytes } = this.device.layout;
    return Math.max(
      0,
      Math.min(
        2 * 2 ** 20,
        Math.min(tcmBytesPerPe, TCM_WINDOW_BYTES) - tcmReservedBytes - this.tcmUsed(placement),
      ),
    );
  }

  private tcmUsed(placement: KernelPlacement): number {
    const entry = this.device
      .stats()
      .find(
        (s) =>
          s.space === "tcm" &&
          s.sip === placement.sip &&
          s.cube === placement.cube &&
          s.pe === placement.peIndex,
      );
    return entry?.used ?? 0;
  }
}

function isGrid(grid: Grid | GridSpec | undefined): grid is Grid {
  return grid !== undefined && "size" in grid && Array.isArray(grid.sips);
}
