import { KbError, type KbErrorContext } from "@kb/errors";
import type { KernelHost } from "@kb/tl";

/** Kernels a report lists by name before it counts the rest. */
const SHOWN_KERNELS = 16;

/**
 * One line per kernel still running on `host`, in start order: `  sip0.cube0.pe1: kernel k,
 * tl.recv("west") at k.ts:12:5 (since t=120 ns)` (see `KernelRunner.describeWait`), the first
 * {@link SHOWN_KERNELS} and then `  ... and N more`.
 * @internal
 */
export function kernelWaitLines(host: KernelHost): string[] {
  const kernels = [...host.active];
  const lines = kernels.slice(0, SHOWN_KERNELS).map((runner) => `  ${runner.describeWait()}`);
  if (kernels.length > lines.length) lines.push(`  ... and ${kernels.length - lines.length} more`);
  return lines;
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
