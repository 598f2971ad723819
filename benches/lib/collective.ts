import type { RankScope } from "@kb/ccl";
import type { Simulator } from "@kb/runtime";
import * as z from "zod";

/** The `scope` param of the collective benches: what a rank is. */
export const scopeParam = z
  .enum(["auto", "sips", "cubes", "pes"])
  .default("auto")
  .describe(
    "What a rank is: a SIP, a cube of SIP 0, or a PE of cube 0; auto: SIPs when there are several, else cubes, else PEs.",
  );

/** `scope`, with `"auto"` resolved on `sim`'s topology: SIPs when there are several, else cubes, else PEs. */
export function rankScope(sim: Simulator, scope: z.infer<typeof scopeParam>): RankScope {
  if (scope !== "auto") return scope;
  const topology = sim.machine.graph.topology;
  return topology.system.sips > 1 ? "sips" : topology.sip.cubes > 1 ? "cubes" : "pes";
}
