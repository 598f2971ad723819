import type { KbPlugin, PeCommand, Tracer } from "@kb/components";
import type { OpLogger } from "@kb/oplog";
import type { TLOptions } from "@kb/tl";
import type { Grid, GridSpec } from "./grid.js";
import type { HostDataMode } from "./memory/deferred-data.js";
import type { HostWriteFile } from "./memory/host-writes.js";
import type { RunLimits } from "./run-limits.js";

// The options of the Simulator's methods (simulator.ts).

/** Options of `Simulator.fromTopology` (and of `loadSimulator` of `@kb/runtime/node`). */
export interface SimulatorOptions {
  /**
   * Plug-ins, as loaded `KbPlugin` objects (`loadSimulator` of `@kb/runtime/node` also takes
   * package names and files).
   */
  readonly plugins?: readonly KbPlugin[];
  /** Records the op log (phase 2 replays it). */
  readonly opLogger?: OpLogger | null;
  /** Records trace events (Chrome trace JSON). */
  readonly tracer?: Tracer | null;
  /**
   * Tallies each launch's time, engine time and bytes per kernel line (`launches[].sites` of the
   * results; docs/reports.md, "By line"). Default true; false leaves it out (a tracer in front
   * of `tracer` costs a little per serviced message). A machine you build yourself gets it with
   * `tracer: new SiteTap(yourTracer)`.
   */
  readonly sites?: boolean;
  /** HBM page size of device allocations (default 2 MiB). */
  readonly pageBytes?: number;
  /** TCM scratch per PE for a kernel's loaded tiles and compute outputs (default: 2 MiB, or what fits). */
  readonly scratchBytes?: number;
  /** PE_CPU cycles per tl call that emits a command (ADR-0046 D6; default 0). */
  readonly dispatchCycles?: number;
  /**
   * Keeps every `tl.load` observation, in order, in `Simulator.loadObservations`, for
   * `comparePhases` (`kb run --check-phases`) to compare with what phase 2 computes for the same
   * op. Default false: the kernels' memory has no `observeLoad` then, so it costs nothing.
   *
   * **Gotchas**: memory grows with every load: each observation holds a copy of the tile the
   * kernel received (`rows * rowBytes` bytes) for the simulator's lifetime, so a run that loads
   * 10 GB in total keeps 10 GB. Run it on a size whose loads fit in host memory.
   */
  readonly checkPhases?: boolean;
  /**
   * Bytes of host writes (`Simulator.hostWrites`, phase 2's initial data) kept in memory. Past
   * it, when there is a {@link hostWriteFile}, they all go to the file it opens, those held so far
   * and every later one, so a sweep that copies gigabytes of inputs in costs disk rather than
   * memory; phase 2 reads each back when it applies it. Default 256 MiB; `Infinity` keeps every
   * write in memory (as does having no `hostWriteFile`).
   */
  readonly hostWriteMemoryBytes?: number;
  /**
   * Opens the file host writes past {@link hostWriteMemoryBytes} go to, called once, at the first
   * write past it. Default: none, every write stays in memory. `loadSimulator` of
   * `@kb/runtime/node` passes a temporary `SpillFile` (of `@kb/oplog/node`, which nothing
   * outlives: removed from its directory at once on Linux and macOS, else when the process exits).
   */
  readonly hostWriteFile?: () => HostWriteFile;
  /**
   * What copies of deferred tensors (`deferredTensor`) do with their bytes: `full` (default)
   * makes and copies them; `timing-only` never makes them (same simulated time; phase 1 does not
   * know them, and a kernel reading their values throws `TL_PENDING_HANDLE` naming the tensor).
   * Copies of Tensors always copy their bytes. See {@link HostDataMode}.
   */
  readonly hostData?: HostDataMode;
  /**
   * Bounds on the run (DES events, simulated time, wall time; see {@link RunLimits}): reaching one
   * stops the run with `RUN_LIMIT`, naming each kernel still running and the tl call it waits on.
   * Default: 500 million events per wait of the host program (`DEFAULT_MAX_EVENTS`), no other limit.
   */
  readonly limits?: RunLimits;
}

/** Options of `Simulator.free`. */
export interface FreeOptions {
  /**
   * Whether later allocations may take the tensor's addresses (default true). `false` keeps them
   * taken, so the tensors a sweep allocates after the free land where they would have had it
   * lived: where a tensor lies decides which HBM pseudo-channels serve it, so this keeps the
   * simulated times of a run that frees what it no longer needs equal to those of one that never
   * freed. The bytes are released in both phases either way.
   */
  readonly reuse?: boolean;
}

/** Options of `Simulator.launch`. */
export interface LaunchOptions<Args extends readonly unknown[]> {
  /** The PEs to run on (default: every PE of the topology). */
  readonly grid?: Grid | GridSpec;
  /**
   * A logical launch grid, Triton's `grid`: `[nx]`, `[nx, ny]` or `[nx, ny, nz]` programs (each
   * an integer >= 1). Default: none, a persistent launch.
   *
   * - **Persistent** (no `programs`): one program per PE of `grid`; `tl.programId(axis)` is the
   *   PE's position in the grid (axis 0 PE within its cube, 1 cube, 2 SIP) and
   *   `tl.numPrograms(axis)` the grid's size on that axis.
   * - **Logical** (`programs`): nx x ny x nz programs; `tl.programId(axis)` /
   *   `tl.numPrograms(axis)` are the program's logical ids and the grid's size, as in Triton.
   *   The block scheduler takes programs in linear order (x fastest, then y, then z): program i
   *   goes to the grid's PE i (placement order: SIP, then cube, then PE) in the first round, then
   *   each PE takes the next program when its previous one ended (its async commands included).
   *   A further program costs its PE_CPU `dispatch_ns x freq_ghz + dispatchCycles` cycles
   *   (docs/latency-model.md section 6). PEs beyond the program count are left out of the
   *   launch. Programs share their PE's TCM scratch, one after another, and may not use
   *   `tl.send` / `tl.recv` (`TL_INVALID_CALL`).
   *
   * **When to use**: a kernel written the Triton way (`pid = tl.programId(0)`, one block per
   * program, `programs: [Math.ceil(n / BLOCK)]`), whatever the number of PEs. Keep the persistent
   * launch for kernels that split work over the PEs themselves or talk over IPCQ.
   *
   * Throws `RUNTIME_INVALID` (at `launch`) for anything else than 1 to 3 integers >= 1.
   */
  readonly programs?: readonly number[];
  /** The kernel's arguments after `tl`. */
  readonly args: Args;
  /** Name in the kernel registry, traces and errors (default: the function's name). */
  readonly name?: string;
  /**
   * Called once the launch completed, for every kernel instance (every program, in linear order,
   * on a logical grid), with the commands it issued in runner mode and the options that give the
   * same `tl` in command-list mode (`commandList(kernel, args, instance.options)` of @kb/tl issues
   * the same commands for a kernel that does not branch on loaded data). Off by default:
   * recording keeps every command of the launch.
   */
  readonly onInstance?: (instance: KernelInstance) => void;
}

/** One kernel instance of a launch (see `LaunchOptions.onInstance`). */
export interface KernelInstance {
  /** What the instance's `tl` was made with (placement, scratch, dispatch cycles), memory aside. */
  readonly options: Omit<TLOptions, "memory">;
  /** The commands it issued, in order. */
  readonly commands: readonly PeCommand[];
}
