import type { PeCommand } from "@kb/spec";
import { TLContext } from "./context.js";
import type { CommandSink, TLOptions } from "./options.js";
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
      return { index: commands.length - 1, done: afterTurns(COMMAND_TURNS) };
    },
  };
  const tl = new TLContext({ ...options, memory: null }, sink);
  await kernel(tl, ...args);
  // A call failed, or one was never awaited: fail as runner mode does.
  const error = tl._endError();
  if (error !== null) throw error;
  return commands;
}

/**
 * Microtask turns a command takes in command-list mode. Runner mode completes a command only
 * after simulated time passes, so a call the kernel did not await is still in flight when the
 * kernel returns or makes its next call; a few dozen turns give command-list mode the same
 * behaviour (and the same errors) without a clock.
 */
const COMMAND_TURNS = 32;

async function afterTurns(turns: number): Promise<void> {
  for (let turn = 0; turn < turns; turn++) await null;
}
