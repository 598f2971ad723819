import type { Topology } from "./schema.js";
import type { TopologyFinding } from "./topology-limits.js";

/**
 * Valid but suspicious choices in a topology (what `kb topology validate` prints as `warning:`
 * lines; the topology still builds and runs):
 *
 * - a link pattern written for peers that do not exist: `sip.ucie` with one cube per SIP,
 *   `system.sip_link` with one SIP (no link is built);
 * - a mesh whose `mesh_cols` is more than its members (the mesh is one row: a line), or a
 *   `mesh_cols` given with another pattern (ignored);
 * - `cube.hbm.interleave_bytes` not a multiple of `flit_bytes` (flits straddle two channels).
 *
 * `written(path)` says whether the file sets a path itself (a default is no choice of the user's):
 * the pattern checks only look at links the file writes.
 */
export function topologyWarnings(
  topology: Topology,
  written: (path: readonly (string | number)[]) => boolean,
): TopologyFinding[] {
  const warnings: TopologyFinding[] = [];
  const patterns = [
    {
      path: ["system", "sip_link"],
      link: topology.system.sip_link,
      count: topology.system.sips,
      what: "SIP",
    },
    { path: ["sip", "ucie"], link: topology.sip.ucie, count: topology.sip.cubes, what: "cube" },
  ] as const;
  for (const { path, link, count, what } of patterns) {
    const countPath = what === "SIP" ? "system.sips" : "sip.cubes";
    if (count === 1 && link.pattern !== "none" && written(path)) {
      warnings.push({
        path: written([...path, "pattern"]) ? [...path, "pattern"] : path,
        message: `pattern ${link.pattern} links ${what}s, but ${countPath} is 1, so no ${path.join(".")} link is built. Remove ${path.join(".")}, or raise ${countPath}.`,
      });
      continue;
    }
    const cols = link.mesh_cols;
    if (cols === undefined) continue;
    if (link.pattern !== "mesh") {
      warnings.push({
        path: [...path, "mesh_cols"],
        message: `mesh_cols is only used by the mesh pattern; with pattern ${link.pattern} it is ignored. Remove it, or set pattern: mesh.`,
      });
    } else if (cols > count) {
      warnings.push({
        path: [...path, "mesh_cols"],
        message: `mesh_cols ${cols} is more than the ${count} ${what}(s) (${countPath}), so the mesh is a single row of ${count}: a line, not a grid. Use mesh_cols ${Math.ceil(Math.sqrt(count))} (the default, a square) or at most ${count}.`,
      });
    }
  }
  const { interleave_bytes: interleave, flit_bytes: flit } = topology.cube.hbm;
  if (interleave % flit !== 0) {
    warnings.push({
      path: ["cube", "hbm", "interleave_bytes"],
      message: `interleave_bytes ${interleave} is not a multiple of flit_bytes ${flit}, so some flits straddle two channels while the model commits whole flits on one pseudo-channel. Use a multiple of ${flit}, such as ${Math.max(flit, Math.round(interleave / flit) * flit)}.`,
    });
  }
  return warnings;
}
