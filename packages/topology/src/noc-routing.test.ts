import { describe, expect, it } from "vitest";
import { expandTopology } from "./expand.js";
import { resolveTopology } from "./load.js";
import { idealTransferNs } from "./route.js";

/** One cube with a 3 x 3 NOC: router links 2 ns, routers 3 ns, PE links 1 ns; `routing` if given. */
function mesh(routing?: string) {
  return expandTopology(
    resolveTopology({
      name: "mesh3",
      system: { sips: 1 },
      sip: { cubes: 1 },
      cube: {
        noc: {
          rows: 3,
          cols: 3,
          link: { bw_gbs: 100, latency_ns: 2 },
          first_flit_ns: 3,
          ...(routing === undefined ? {} : { routing }),
        },
        links: { pe_to_noc: { bw_gbs: 50, latency_ns: 1 } },
      },
    }),
  );
}

const short = (hops: readonly string[]) => hops.map((id) => id.replace("sip0.cube0.", ""));

describe("cube.noc.routing", () => {
  it("xy (the default) crosses the row first, yx the column first, shortest breaks ties by node id", () => {
    const corner = (routing?: string) =>
      short(mesh(routing).route("sip0.cube0.noc.r2c2", "sip0.cube0.noc.r0c0").hops);
    expect(corner("xy")).toEqual(["noc.r2c2", "noc.r2c1", "noc.r2c0", "noc.r1c0", "noc.r0c0"]);
    expect(corner("yx")).toEqual(["noc.r2c2", "noc.r1c2", "noc.r0c2", "noc.r0c1", "noc.r0c0"]);
    // The least-latency search's tie-break: "r1c2" < "r2c1", so the column first here.
    expect(corner("shortest")).toEqual(["noc.r2c2", "noc.r1c2", "noc.r0c2", "noc.r0c1", "noc.r0c0"]);
    expect(corner()).toEqual(corner("xy"));
  });

  it("keeps where a route enters and leaves the mesh, and its formula latency (hand-computed)", () => {
    const graph = mesh("xy");
    // PE 6 (r2c0) to PE 2 (r0c2): pe link 1 + 4 router links x 2 + 5 routers x 3 + pe link 1 = 25 ns.
    const route = graph.route("sip0.cube0.pe6.pe_cpu", "sip0.cube0.pe2.pe_cpu");
    expect(short(route.hops)).toEqual([
      "pe6.pe_cpu",
      "noc.r2c0",
      "noc.r2c1",
      "noc.r2c2",
      "noc.r1c2",
      "noc.r0c2",
      "pe2.pe_cpu",
    ]);
    expect(route.links.map((link) => `${link.src}>${link.dst}`)).toEqual(
      route.hops.slice(1).map((id, index) => `${route.hops[index]}>${id}`),
    );
    expect(route.latencyNs).toBe(25);
    expect(route.minBwGbs).toBe(50);
    expect(idealTransferNs(route, 500)).toBe(35);
    // Kept routes are one object per pair; { keep: false } gives an equal one.
    expect(graph.route("sip0.cube0.pe6.pe_cpu", "sip0.cube0.pe2.pe_cpu")).toBe(route);
    expect(graph.route("sip0.cube0.pe6.pe_cpu", "sip0.cube0.pe2.pe_cpu", { keep: false })).toEqual(route);
  });

  it("refuses another routing name, listing the three", () => {
    expect(() => mesh("west-first")).toThrow(
      /cube\.noc\.routing.*"xy" \| "yx" \| "shortest"|xy.*yx.*shortest/s,
    );
  });
});
