import type { CommandSource, Machine, PeCommand } from "@kb/components";
import { type Environment, Event } from "@kb/des";
import { isKbError, KbError } from "@kb/errors";
import type { KernelPlacement, KernelRunner } from "@kb/tl";

// Logical launch grids (Triton's `grid`): any number of programs, dispatched onto the PEs of a
// launch by a block scheduler. docs/latency-model.md section 6 has the timing; Simulator.launch
// (simulator.ts) builds one ProgramQueue per PE that got a first program.

/** Programs per axis `[nx, ny, nz]` after {@link resolveProgramGrid} (missing axes are 1). */
export type ProgramGrid = readonly [number, number, number];

/**
 * Checks a launch's `programs` option (`[nx]`, `[nx, ny]` or `[nx, ny, nz]`, each an integer >= 1)
 * and fills missing axes with 1.
 *
 * Throws `RUNTIME_INVALID` naming the kernel and saying what a grid is for anything else: not an
 * array, no axis or more than 3, an axis that is 0, negative or not an integer, or more programs
 * in all than 2^53 - 1.
 */
export function resolveProgramGrid(kernel: string, programs: unknown, nowNs: number): ProgramGrid {
  const refuse = (why: string) =>
    new KbError(
      "RUNTIME_INVALID",
      `launch programs ${describe(programs)}: ${why}. A logical grid is Triton's grid: [nx], [nx, ny] or [nx, ny, nz] programs, each an integer >= 1 (e.g. [Math.ceil(n / BLOCK)]); leave programs out to run one program per PE of the launch's grid.`,
      { context: { kernel, simTimeNs: nowNs } },
    );
  if (!Array.isArray(programs)) throw refuse("not an array");
  if (programs.length < 1 || programs.length > 3) throw refuse(`${programs.length} axes, not 1 to 3`);
  programs.forEach((count: unknown, axis) => {
    if (typeof count !== "number" || !Number.isInteger(count) || count < 1) {
      throw refuse(`axis ${axis} is ${describe(count)}, not an integer >= 1`);
    }
  });
  const [nx, ny = 1, nz = 1] = programs as number[];
  const grid: ProgramGrid = [nx as number, ny, nz];
  if (!Number.isSafeInteger(programCount(grid))) throw refuse("more than 2^53 - 1 programs in all");
  return grid;
}

/** Programs of a grid: nx x ny x nz. */
export function programCount(grid: ProgramGrid): number {
  return grid[0] * grid[1] * grid[2];
}

/** The program ids of linear program `index`: x fastest, then y, then z (Triton's order). */
export function programIdOf(index: number, grid: ProgramGrid): [number, number, number] {
  const [nx, ny] = grid;
  return [index % nx, Math.floor(index / nx) % ny, Math.floor(index / (nx * ny))];
}

/** The placement of program `index` on the PE of `pe`: that PE, the program's logical ids. */
export function programPlacement(pe: KernelPlacement, index: number, grid: ProgramGrid): KernelPlacement {
  return { ...pe, programId: programIdOf(index, grid), numPrograms: grid };
}

/**
 * The block scheduler of a logical launch: programs are taken in linear order (x fastest, then
 * y, then z). In the first round program i goes to the launch's PE i (placement order); after
 * that each PE takes the next program when its previous one has ended, so the order among PEs
 * follows simulated time (ties in the engine's deterministic event order).
 */
export class BlockScheduler {
  private next: number;

  constructor(
    /** Programs in all. */
    readonly programs: number,
    /** PEs of the launch that take a program in the first round: min(programs, PEs). */
    readonly firstRound: number,
  ) {
    this.next = firstRound;
  }

  /** The next program not yet taken, or null when every program has been taken. */
  take(): number | null {
    return this.next < this.programs ? this.next++ : null;
  }
}

/** What a {@link ProgramQueue} needs to start a program on its PE. */
export interface ProgramQueueOptions {
  readonly env: Environment;
  readonly scheduler: BlockScheduler;
  /** The PE's first program (its placement index). */
  readonly first: number;
  /** PE_CPU cycles charged before every program after the first (docs/latency-model.md section 6). */
  readonly startCycles: number;
  /** A runner for linear program `index` on this PE. */
  readonly start: (index: number) => KernelRunner;
  /** Names a program in errors (`program [3, 0, 0] of [10, 1, 1]`). */
  readonly describe: (index: number) => string;
}

/** Waits for every async command still outstanding (the end of a program). */
const DRAIN: PeCommand = { kind: "wait" };

/**
 * One PE's program of a logical launch, as its PE_CPU runs it (a `CommandSource`): the runner
 * of its first program; when that kernel returns, a `wait` for its outstanding async commands
 * (a composite's tiles: a program ends when its work has, and the next reuses the PE's TCM
 * scratch); then it takes the next program from the {@link BlockScheduler}, charges
 * `startCycles` and runs that program's runner; the PE's program ends when the scheduler has
 * none left.
 *
 * Errors of a program's kernel are rethrown with the program named.
 */
export class ProgramQueue implements CommandSource {
  readonly name: string;
  private runner: KernelRunner | null;
  private index: number;
  /** Commands handed to the PE_CPU so far: its program positions count all programs' commands. */
  private issued = 0;
  /** The PE_CPU's position of the current program's first command (a kernel counts from 0). */
  private base = 0;

  constructor(private readonly options: ProgramQueueOptions) {
    this.index = options.first;
    this.runner = options.start(options.first);
    this.name = this.runner.name;
  }

  /** The tl call of the current program in flight (what its next command is for), or null. */
  callInFlight(): ReturnType<KernelRunner["tl"]["_callInFlight"]> {
    return this.runner?.tl._callInFlight() ?? null;
  }

  next(): PeCommand | null | Event<PeCommand | null> {
    if (this.runner === null) {
      const index = this.options.scheduler.take();
      if (index === null) return null;
      this.index = index;
      this.runner = this.options.start(index);
      this.base = this.issued + (this.options.startCycles > 0 ? 1 : 0);
      if (this.options.startCycles > 0)
        return this.count({ kind: "cycles", cycles: this.options.startCycles });
    }
    let answer: PeCommand | null | Event<PeCommand | null>;
    try {
      answer = this.runner.next();
    } catch (error) {
      throw this.located(error);
    }
    if (answer === null) return this.count(this.ended());
    if (!(answer instanceof Event)) return this.count(answer);
    // The kernel decides in a microtask; it may return (null), which this PE answers with the
    // drain instead, so the PE_CPU waits on an event of ours.
    const relayed = this.options.env.event<PeCommand | null>();
    answer.addCallback((event) => {
      if (!event.ok) {
        event.defused = true;
        relayed.fail(this.located(event.value));
      } else relayed.succeed(this.count(event.value === null ? this.ended() : (event.value as PeCommand)));
    });
    return relayed;
  }

  /**
   * Counts a command handed to the PE_CPU; a `wait` for positions of the current program's own
   * commands (`tl.wait(handle)` of a composite or an async load) is moved to the PE_CPU's.
   */
  private count(command: PeCommand): PeCommand {
    this.issued++;
    if (command.kind !== "wait" || command.commands === undefined || this.base === 0) return command;
    const base = this.base;
    return { kind: "wait", commands: command.commands.map((position) => position + base) };
  }

  private ended(): PeCommand {
    this.runner = null;
    return DRAIN;
  }

  private located(error: unknown): unknown {
    if (!isKbError(error)) return error;
    return new KbError(error.code, `${this.options.describe(this.index)}: ${error.detail}`, {
      context: error.context,
      cause: error,
    });
  }
}

/** A value as a message shows it: arrays element by element, so NaN stays NaN. */
function describe(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(describe).join(", ")}]`;
  return typeof value === "string" ? JSON.stringify(value) : String(value);
}

/** What {@link programQueues} needs. */
export interface ProgramQueuesOptions {
  readonly machine: Machine;
  /** The launch's name (errors). */
  readonly kernel: string;
  readonly grid: ProgramGrid;
  /** The PEs of the launch, one per first-round program (min(programs, PEs of the grid)). */
  readonly placements: readonly KernelPlacement[];
  /** `SimulatorOptions.dispatchCycles`: PE_CPU cycles per tl call that emits a command. */
  readonly dispatchCycles: number;
  /**
   * A runner for linear program `index` with `placement` on the launch's PE `pe` (an index into
   * `placements`), refusing IPCQ commands with `ipcqRefusal`.
   */
  readonly start: (
    index: number,
    placement: KernelPlacement,
    pe: number,
    ipcqRefusal: string,
  ) => KernelRunner;
}

/**
 * The per-PE programs of a logical launch: one {@link ProgramQueue} per placement, sharing one
 * {@link BlockScheduler}. Each PE's start cost is {@link programStartCycles}.
 *
 * Throws `RUNTIME_INVALID` when a PE's PE_CPU impl has no `dispatch_ns` / `freq_ghz` params.
 */
export function programQueues(options: ProgramQueuesOptions): ProgramQueue[] {
  const { grid, kernel } = options;
  const total = programCount(grid);
  const scheduler = new BlockScheduler(total, options.placements.length);
  const shape = `[${grid.join(", ")}]`;
  const refusal = `the programs of a logical grid (programs ${shape}) do not own their PE's inter-PE queues: they run one after another on whichever PE the block scheduler gives them, so a program may wait for a peer queued behind it on its own PE (a deadlock), and a queue's direction names a physical neighbour, not a program. Launch a kernel that uses tl.send / tl.recv persistently (leave programs out: one program per PE, programId = the PE's grid position).`;
  return options.placements.map(
    (pe, first) =>
      new ProgramQueue({
        env: options.machine.env,
        scheduler,
        first,
        startCycles: programStartCycles(options.machine, pe.pe, options.dispatchCycles, kernel),
        start: (index) => options.start(index, programPlacement(pe, index, grid), first, refusal),
        describe: (index) => `program [${programIdOf(index, grid).join(", ")}] of ${shape}`,
      }),
  );
}

/**
 * PE_CPU cycles to start a program after the first on PE `pe`: the PE_CPU takes it from the
 * launch's queue as it issues a command (`dispatch_ns`, at `freq_ghz`) and enters it as a tl call
 * that emits a command is entered (`dispatchCycles`, ADR-0046 D6):
 * `dispatch_ns x freq_ghz + dispatchCycles` (2 cycles, 2 ns, with pe_cpu_v1's defaults).
 *
 * Throws `RUNTIME_INVALID` when the PE_CPU impl has no numeric `dispatch_ns` / `freq_ghz` params.
 */
export function programStartCycles(
  machine: Machine,
  pe: string,
  dispatchCycles: number,
  kernel: string,
): number {
  const cpu = machine.component(`${pe}.pe_cpu`);
  const { dispatch_ns: dispatchNs, freq_ghz: freqGhz } = cpu.params as Record<string, unknown>;
  if (typeof dispatchNs !== "number" || typeof freqGhz !== "number") {
    throw new KbError(
      "RUNTIME_INVALID",
      `a logical grid prices the start of each further program on a PE from its PE_CPU's dispatch_ns and freq_ghz params, and ${cpu.id} (${cpu.impl}) has no numeric ${typeof dispatchNs !== "number" ? "dispatch_ns" : "freq_ghz"}. Give the PE_CPU impl those params, or launch persistently (leave programs out).`,
      { context: { kernel, pe, simTimeNs: machine.env.now } },
    );
  }
  return dispatchNs * freqGhz + dispatchCycles;
}
