import { Simulator } from "@kb/runtime";
import type { TL } from "@kb/tl";

/**
 * True once the machine's PE_CPU services IPCQ commands (packages/components): a one-message
 * send/recv kernel runs on the schema's default machine without the "not serviced" error. Tests
 * that run collectives on the simulator skip until then.
 */
async function probeIpcq(): Promise<boolean> {
  try {
    const sim = await Simulator.fromTopology({ name: "probe" });
    await sim.launch(
      async function probe(tl: TL) {
        if (tl.programId(0) === 0) await tl.send("east", tl.zeros([4], "f32"));
        else await tl.recv("west", { shape: [4], dtype: "f32" });
      },
      { grid: sim.grid({ pes: 2 }), args: [] },
    );
    return true;
  } catch (error) {
    if (String((error as Error)?.message).includes("IPCQ send/recv come with @kb/ccl")) return false;
    throw error;
  }
}

/** Whether the simulator services IPCQ send/recv (see {@link probeIpcq}). */
export const ipcqAvailable = await probeIpcq();
