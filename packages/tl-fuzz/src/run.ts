import type { PeCommand } from "@kb/components";
import { MemorySink, OpLogger } from "@kb/oplog";
import {
  formatPhaseCheck,
  type KernelInstance,
  type PhaseCheck,
  PhaseComparer,
  replay,
  Simulator,
} from "@kb/runtime";
import { Tensor } from "@kb/tensor";
import { commandList, type Kernel } from "@kb/tl";
import { gridOf, hasSecondLaunch, KERNEL_NAME, kernelParams, kernelSource } from "./codegen.js";
import type { Program, Step } from "./program.js";
import { SECOND_KERNEL_NAME } from "./round3-source.js";

/** The topology programs run on: the schema's defaults (1 SIP, 1 cube of 8 PEs). */
export const FUZZ_TOPOLOGY = { name: "tl-fuzz" } as const;

// biome-ignore lint/complexity/useArrowFunction: the constructor of async functions
const AsyncFunction = Object.getPrototypeOf(async function () {}).constructor as new (
  ...args: string[]
) => Kernel;

/** Compiles the kernel `name` of the source of `program` (the text a repro prints). */
export function compileKernel(program: Program, name = KERNEL_NAME): Kernel {
  const source = kernelSource(program);
  const body = `${source}\nreturn ${name}(tl, ${kernelParams(program).join(", ")});`;
  const kernel = new AsyncFunction("tl", ...kernelParams(program), body);
  Object.defineProperty(kernel, "name", { value: name });
  return kernel;
}

/**
 * Steps whose commands depend on loaded data (a branch; offsets from a loaded index): command-list
 * mode cannot know them, only runner mode runs such kernels.
 */
function dependsOnData(step: Step): boolean {
  if (step.kind === "atomic") return step.index !== null;
  return ["branch", "gather", "maskedGather", "scatter", "rowScatter"].includes(step.kind);
}

/** What phase 2 left in each output, in program order. */
export interface MachineRun {
  readonly outputs: readonly Tensor[];
  /** Op-log records replayed. */
  readonly ops: number;
  /** Simulated end time, ns. */
  readonly endNs: number;
  /** Every tile the kernel loaded in phase 1 against what phase 2 copied for the same op. */
  readonly phases: PhaseCheck;
  /** `formatPhaseCheck` of it. */
  readonly phasesText: string;
  /**
   * Where command-list mode issued other commands than runner mode (a kernel that does not branch
   * on loaded data must issue the same), or null; null too for kernels that branch.
   */
  readonly commandListDifference: string | null;
  /** Kernel instances whose command-list run was compared with runner mode. */
  readonly commandListsCompared: number;
}

/**
 * Runs `program` as a user would: inputs copied to the device, the kernel launched on the grid
 * (phase 1, the simulated machine), then the op log replayed with real arithmetic (phase 2); the
 * outputs are read from phase 2's memory.
 */
export async function runOnMachine(program: Program): Promise<MachineRun> {
  const sink = new MemorySink();
  const sim = await Simulator.fromTopology(FUZZ_TOPOLOGY, {
    opLogger: new OpLogger(sink),
    checkPhases: true,
  });
  const args = [];
  for (const input of program.inputs) {
    args.push(
      await sim.toDevice(Tensor.fromArray(input.values, input.shape, input.dtype), { name: input.name }),
    );
  }
  const outputs = [];
  for (const output of program.outputs) {
    outputs.push(
      output.init === undefined
        ? sim.empty(output.shape, output.dtype, { name: output.name })
        : await sim.toDevice(Tensor.fromArray(output.init, output.shape, output.dtype), {
            name: output.name,
          }),
    );
  }
  args.push(...outputs);
  const kernel = compileKernel(program);
  // Kernels that depend on loaded data (a branch, a gather through loaded indices) issue what
  // command-list mode cannot know: only runner mode runs them.
  const branches = program.steps.some(dependsOnData);
  const instances: KernelInstance[] = [];
  await sim.launch(kernel, {
    grid: gridOf(program),
    args,
    name: KERNEL_NAME,
    ...(branches ? {} : { onInstance: (instance: KernelInstance) => instances.push(instance) }),
  });
  // The second launch reads what the first wrote (runner mode only: its offsets are loaded ids).
  if (hasSecondLaunch(program)) {
    await sim.launch(compileKernel(program, SECOND_KERNEL_NAME), {
      grid: gridOf(program),
      args,
      name: SECOND_KERNEL_NAME,
    });
  }
  let commandListDifference: string | null = null;
  for (const instance of instances) {
    const listed = await commandList(kernel, args, instance.options);
    commandListDifference = firstDifference(instance.options.placement.pe, instance.commands, listed);
    if (commandListDifference !== null) break;
  }
  const comparer = new PhaseComparer(sim.loadObservations, sink.records);
  const { store } = replay(sim.hostWrites, sink.records, { onExecuted: comparer.onExecuted });
  const phases = comparer.result();
  return {
    outputs: outputs.map((output) => store.readTensor(output.address, output.shape, output.dtype)),
    ops: sink.records.length,
    endNs: sim.now,
    phases,
    phasesText: formatPhaseCheck(phases),
    commandListDifference,
    commandListsCompared: instances.length,
  };
}

/** A command as data: payload bytes and callbacks left out. */
function plain(command: PeCommand | undefined): string {
  return JSON.stringify(command ?? null, (key, value: unknown) =>
    key === "data" || typeof value === "function" ? undefined : value,
  );
}

function firstDifference(
  pe: string,
  runner: readonly PeCommand[],
  listed: readonly PeCommand[],
): string | null {
  const length = Math.max(runner.length, listed.length);
  for (let i = 0; i < length; i++) {
    const [a, b] = [plain(runner[i]), plain(listed[i])];
    if (a !== b) {
      return `${pe}: command ${i} of ${runner.length} in runner mode is ${a}, command-list mode issued ${b} (${listed.length} commands)`;
    }
  }
  return null;
}
