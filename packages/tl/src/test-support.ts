import { defaultRegistry } from "@kb/builtins";
import { buildMachine, type Machine } from "@kb/components";
import { isKbError, type KbError } from "@kb/errors";
import type { PeCommand } from "@kb/spec";
import { encodeAddress, expandTopology, resolveTopology, type TopologyInput, tcmAddress } from "@kb/topology";
import { commandList } from "./command-list.js";
import type { KernelMemory } from "./kernel-memory.js";
import type { KernelPlacement } from "./options.js";
import { type Kernel, KernelHost, KernelRunner } from "./runner.js";

/** A byte store for tests: a Map of bytes, zeros where nothing was written; pending bytes in a Set. */
export class TestMemory implements KernelMemory {
  readonly bytes = new Map<number, number>();
  readonly pending = new Set<number>();
  check(): void {}
  read(address: number, length: number): Uint8Array {
    const out = new Uint8Array(length);
    for (let i = 0; i < length; i++) out[i] = this.bytes.get(address + i) ?? 0;
    return out;
  }
  write(address: number, bytes: Uint8Array): void {
    for (let i = 0; i < bytes.length; i++) {
      this.bytes.set(address + i, bytes[i] as number);
      this.pending.delete(address + i);
    }
  }
  markPending(address: number, length: number): void {
    for (let i = 0; i < length; i++) this.pending.add(address + i);
  }
  isPending(address: number, length: number): boolean {
    for (let i = 0; i < length; i++) if (this.pending.has(address + i)) return true;
    return false;
  }
}

/** The placement of `sip0.cube<cube>.pe<pe>` in a grid of 8 PEs x 2 cubes. */
export function placementOf(pe = 0, cube = 0): KernelPlacement {
  return {
    pe: `sip0.cube${cube}.pe${pe}`,
    sip: 0,
    cube,
    peIndex: pe,
    programId: [pe, cube, 0],
    numPrograms: [8, 2, 1],
  };
}

/** `offset` bytes into the HBM of sip0.cube0. */
export function hbmAt(offset: number): number {
  return encodeAddress({ sip: 0, cube: 0, space: "hbm", offset });
}

/** `offset` bytes into the scratch of {@link listCommands}' kernels: PE0's TCM from 1 MiB. */
export function scratchAt(offset: number): number {
  return tcmAddress(0, 0, 0, 2 ** 20 + offset);
}

/** The commands `kernel` issues in command-list mode, as kernel `k` on sip0.cube0.pe0. */
export function listCommands(kernel: Kernel, dispatchCycles = 0): Promise<PeCommand[]> {
  return commandList(kernel, [], {
    kernel: "k",
    placement: placementOf(),
    scratch: { offset: 2 ** 20, bytes: 2 ** 20 },
    dispatchCycles,
  });
}

/** A machine of a topology object (the schema's defaults: 1 SIP, 1 cube of 8 PEs). */
export function machineOf(topology: Partial<TopologyInput> = {}): Machine {
  return buildMachine(expandTopology(resolveTopology({ name: "tl-test", ...topology })), {
    registry: defaultRegistry(),
  });
}

/** Runs `kernel` on one PE of `machine` in runner mode; returns the commands it issued. */
export async function runKernel(
  machine: Machine,
  kernel: Kernel,
  args: readonly unknown[] = [],
  options: {
    memory?: KernelMemory;
    placement?: KernelPlacement;
    dispatchCycles?: number;
    scratch?: number;
  } = {},
): Promise<{ commands: PeCommand[]; runner: KernelRunner; host: KernelHost }> {
  const host = new KernelHost(machine.env);
  const commands: PeCommand[] = [];
  const placement = options.placement ?? placementOf();
  const runner = new KernelRunner(host, kernel, args, {
    kernel: kernel.name || "kernel",
    placement,
    scratch: { offset: 2 ** 20, bytes: options.scratch ?? 2 ** 20 },
    memory: options.memory ?? new TestMemory(),
    dispatchCycles: options.dispatchCycles ?? 0,
    record: commands,
  });
  const done = machine.submit(placement.pe, runner, runner.name);
  await host.run(done);
  return { commands, runner, host };
}

/** The KbError `promise` rejects with; fails the test when it resolves or rejects with something else. */
export async function failure(promise: Promise<unknown>): Promise<KbError> {
  try {
    await promise;
  } catch (error) {
    if (isKbError(error)) return error;
    throw error;
  }
  throw new Error("expected a KbError");
}

/** Simulated ns of `kernel` run alone on PE 0 of a fresh machine of the schema's defaults. */
export async function timeOf(kernel: Kernel): Promise<number> {
  const machine = machineOf();
  await runKernel(machine, kernel);
  return machine.env.now;
}

/** Runs `kernel` on a fresh machine (schema defaults) with `memory`; returns the end time, ns. */
export async function endNs(kernel: Kernel, memory: KernelMemory = new TestMemory()): Promise<number> {
  const machine = machineOf();
  await runKernel(machine, kernel, [], { memory });
  return machine.env.now;
}
