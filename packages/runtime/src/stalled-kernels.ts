import type { Machine } from "@kb/components";
import { groupDigits, KbError, type KbErrorContext } from "@kb/errors";
import type { KernelHost, KernelRunner, StalledKernel } from "@kb/tl";

/** Kernels a report lists by name before it counts the rest. */
const SHOWN_KERNELS = 16;

/**
 * One line per kernel still running on `host`, in start order, except those of `except`: `
 * sip0.cube0.pe1: kernel k, tl.recv("west") at k.ts:12:5 (since t=120 ns)` (see
 * `KernelRunner.describeWait`), the first {@link SHOWN_KERNELS} and then `  ... and N more`.
 * @internal
 */
export function kernelWaitLines(host: KernelHost, except: ReadonlySet<KernelRunner> = new Set()): string[] {
  const kernels = [...host.active].filter((runner) => !except.has(runner));
  return shown(kernels.map((runner) => `  ${runner.describeWait()}`));
}

/**
 * One line per kernel of a stall (`KernelHost.stalled`), most calls first: `  sip0.cube0.pe0:
 * kernel spin, 500,000 calls of tl.cycles(1) at spin.ts:7:21`, naming each distinct call among
 * its last ones in source order (a loop's body), the first {@link SHOWN_KERNELS} and then `  ...
 * and N more`.
 * @internal
 */
export function stalledKernelLines(kernels: readonly StalledKernel<KernelRunner>[]): string[] {
  return shown(
    kernels.map(({ kernel, calls, recent }) => {
      const described = new Map<string, number[]>();
      for (const { site, command } of recent) {
        const text =
          site === null
            ? `a ${command.kind} command`
            : site.describe(
                site.call === "cycles" && command.kind === "cycles" ? String(command.cycles) : undefined,
              );
        const location = site?.location;
        described.set(text, location == null ? [] : [location.line, location.col]);
      }
      const ordered = [...described].sort(([, a], [, b]) => compareNumbers(a, b)).map(([text]) => text);
      return `  ${kernel.tl.placement.pe}: kernel ${kernel.name}, ${groupDigits(calls)} calls of ${ordered.join(", ")}`;
    }),
  );
}

/**
 * How far the machine has got: the messages its components processed (a DMA block, a GEMM, a
 * packet through a router, a queue's transfer). It changes whenever the machine makes progress;
 * a kernel's `tl.cycles` processes no message. The stall detector's `progress`.
 * @internal
 */
export function machineProgress(machine: Machine): number {
  let processed = 0;
  for (const component of machine.components) processed += component.stats.ops;
  return processed;
}

function shown(lines: string[]): string[] {
  if (lines.length <= SHOWN_KERNELS) return lines;
  return [...lines.slice(0, SHOWN_KERNELS), `  ... and ${lines.length - SHOWN_KERNELS} more`];
}

function compareNumbers(a: readonly number[], b: readonly number[]): number {
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    const difference = (a[i] as number) - (b[i] as number);
    if (difference !== 0) return difference;
  }
  return a.length - b.length;
}

/**
 * A `DES_DEADLOCK` while kernels run on `host`, rethrown to lead with them: each blocked kernel
 * with its PE, its pending tl call (with the direction of a send or receive, the handle of a
 * wait), the call's line and since when, then what to check, then the engine's report of the
 * machine's waiting processes (grouped by kind). The error is located at the first kernel's
 * pending call. Any other error, or a deadlock with no kernel running, is returned unchanged.
 * @internal
 */
export function explainDeadlock(host: KernelHost, error: unknown): unknown {
  if (!(error instanceof KbError) || error.code !== "DES_DEADLOCK" || host.active.size === 0) return error;
  const first = host.active.values().next().value;
  const location = first?.tl._callInFlight()?.location ?? null;
  const context: KbErrorContext = {
    ...(location !== null ? { file: location.file, line: location.line, col: location.col } : {}),
    ...(first !== undefined ? { kernel: first.name, pe: first.tl.placement.pe } : {}),
    ...error.context,
  };
  return new KbError(
    "DES_DEADLOCK",
    `the launch deadlocked: ${host.active.size} kernel(s) wait on a tl call that can never complete:\n` +
      `${kernelWaitLines(host).join("\n")}\n` +
      "A tl.recv completes when the neighbour in its direction sends toward this PE (tl.send), a tl.send " +
      "when the receiving PE frees a slot (tl.recv), a tl.wait when what it waits for completes: check " +
      "that every receive has a matching send on the neighbouring PE, in the same order.\n" +
      `The machine's processes: ${error.detail}`,
    { context, cause: error },
  );
}
