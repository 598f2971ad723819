import type { PeCommand } from "@kb/components";
import { type CommandSink, TLContext, type TLOptions } from "./context.js";
import type { Kernel } from "./runner.js";

/**
 * Command-list mode (ADR-0046 D2): runs `kernel` with a `tl` whose calls resolve at once with
 * placeholder handles (no data, no simulated time) and returns the commands it issued, in order.
 * For a kernel that does not branch on loaded data this is the sequence runner mode issues;
 * reading `handle.data` throws, so a kernel that branches on data fails here with a clear error.
 */
export async function commandList(
  kernel: Kernel,
  args: readonly unknown[],
  options: Omit<TLOptions, "memory">,
): Promise<PeCommand[]> {
  const commands: PeCommand[] = [];
  const sink: CommandSink = {
    runner: false,
    now: () => null,
    issue: (command) => {
      commands.push(command);
      return { index: commands.length - 1, done: Promise.resolve() };
    },
  };
  const tl = new TLContext({ ...options, memory: null }, sink);
  await kernel(tl, ...args);
  return commands;
}
