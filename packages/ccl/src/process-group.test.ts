import { isKbError } from "@kb/errors";
import { Simulator } from "@kb/runtime";
import { describe, expect, it } from "vitest";
import { ringAllReduce } from "./algorithms/ring-all-reduce.js";
import { initProcessGroup } from "./process-group.js";
import { defaultAlgorithms } from "./registry.js";

// The process group's host side: what it builds and refuses before anything is launched.
// Collectives that run on the machine are in e2e.test.ts.

const sim = await Simulator.fromTopology({ name: "pg", sip: { cubes: 4 }, system: { sips: 2 } });

function errorOf(run: () => unknown): unknown {
  try {
    run();
  } catch (error) {
    return error;
  }
  return undefined;
}

describe("initProcessGroup", () => {
  it("ranks SIPs by default, else cubes or PEs, all of them unless the defaults say otherwise", () => {
    const bySip = initProcessGroup(sim, { backend: "ahbm" });
    expect([bySip.scope, bySip.getWorldSize(), bySip.getRank(), bySip.lanes]).toEqual(["sips", 2, 0, 8]);
    expect(initProcessGroup(sim, { backend: "ahbm", scope: "cubes" }).getWorldSize()).toBe(4);
    const byPe = initProcessGroup(sim, { backend: "ahbm", scope: "pes" });
    expect(byPe.getWorldSize()).toBe(8);
    expect(byPe.group.members).toEqual([0, 1, 2, 3, 7, 6, 5, 4]);
    const four = initProcessGroup(sim, {
      backend: "ahbm",
      scope: "pes",
      cclConfig: { defaults: { worldSize: 4 } },
    });
    expect(four.group.members).toEqual([0, 1, 5, 4]);
  });

  it("takes the slot size from the topology unless the defaults ask for less", () => {
    expect(initProcessGroup(sim, { backend: "ahbm" }).slotBytes).toBe(16384);
    expect(
      initProcessGroup(sim, { backend: "ahbm", cclConfig: { defaults: { slotBytes: 4096 } } }).slotBytes,
    ).toBe(4096);
    expect(() =>
      initProcessGroup(sim, { backend: "ahbm", cclConfig: { defaults: { slotBytes: 32768 } } }),
    ).toThrow(/defaults\.slotBytes 32768 is larger than the 16384-byte IPCQ slots of topology pg/);
  });

  it("refuses other backends, naming the one it has", () => {
    for (const backend of ["nccl", "gloo", "mpi"]) {
      const error = errorOf(() => initProcessGroup(sim, { backend }));
      expect(isKbError(error, "RUNTIME_INVALID")).toBe(true);
      expect(String(error)).toMatch(
        new RegExp(`backend "${backend}" is not available; @kb/ccl provides "ahbm"`),
      );
    }
  });

  it("refuses world sizes without a ring and bad placements", () => {
    expect(() =>
      initProcessGroup(sim, { backend: "ahbm", scope: "cubes", cclConfig: { defaults: { worldSize: 3 } } }),
    ).toThrow(/no ring of 3 of the 4 cubes/);
    expect(() =>
      initProcessGroup(sim, { backend: "ahbm", cclConfig: { defaults: { worldSize: 3 } } }),
    ).toThrow(/defaults\.worldSize 3 is more than the 2 ranks/);
    expect(() => initProcessGroup(sim, { backend: "ahbm", scope: "pes", cube: 4 })).toThrow(
      /cube must be 0\.\.3, got 4/,
    );
    expect(() => initProcessGroup(sim, { backend: "ahbm", lanes: 9 })).toThrow(/lanes must be 1\.\.8, got 9/);
    expect(() =>
      initProcessGroup(sim, { backend: "ahbm", cclConfig: { allReduce: [{ algorithm: "rign" }] } }),
    ).toThrow(/allReduce\[0\]\.algorithm: no allReduce algorithm named "rign"; did you mean "ring"\?/);
  });

  it("chooses algorithms by message size, and may use registered ones", () => {
    const pg = initProcessGroup(sim, { backend: "ahbm", scope: "cubes" });
    expect(pg.algorithmFor("allReduce", 8192).name).toBe("tree");
    expect(pg.algorithmFor("allReduce", 8193).name).toBe("ring");
    const registry = defaultAlgorithms().register({
      name: "acme:pairs",
      collective: "allReduce",
      description: "needs an even number of ranks",
      kernel: ringAllReduce,
      worldSize: (available) => available - (available % 2),
    });
    const custom = initProcessGroup(sim, {
      backend: "ahbm",
      scope: "cubes",
      registry,
      cclConfig: { allReduce: [{ algorithm: "acme:pairs" }] },
    });
    expect(custom.algorithmFor("allReduce", 1).name).toBe("acme:pairs");
  });
});

describe("ProcessGroup collectives (host checks)", () => {
  const pg = initProcessGroup(sim, { backend: "ahbm", scope: "cubes" });
  const perCube = (count: number, dtype: "f32" | "i32" = "f32") =>
    [0, 1, 2, 3].map((cube) => sim.empty([count], dtype, { cube }));

  it("needs one tensor per rank of one dtype the collectives support, and a known op", async () => {
    await expect(pg.allReduce(perCube(16).slice(1))).rejects.toThrow(
      /expected one tensor per rank \(4\), got 3/,
    );
    await expect(pg.allReduce(perCube(16, "i32"))).rejects.toThrow(/dtype i32 is not supported/);
    await expect(pg.allReduce(perCube(16), "prod" as never)).rejects.toThrow(/unknown reduction "prod"/);
    await expect(pg.allReduce(sim.empty([3, 16], "f32"))).rejects.toThrow(
      /is not one tensor per rank: pass a list of 4 tensors, or one tensor whose first dimension is the world size/,
    );
    const mixed = perCube(16);
    mixed[2] = sim.empty([17], "f32", { cube: 2 });
    await expect(pg.allReduce(mixed)).rejects.toThrow(/rank 2 has 17 x f32, rank 0 16 x f32/);
  });

  it("checks the sizes of reduce-scatter and all-gather and the broadcast root", async () => {
    await expect(pg.reduceScatter(perCube(16), perCube(60))).rejects.toThrow(
      /each rank's input must be worldSize \(4\) x its output: got 60 x f32 and 16 x f32/,
    );
    await expect(pg.allGather(perCube(60), perCube(16))).rejects.toThrow(
      /each rank's output must be worldSize \(4\) x its input/,
    );
    await expect(pg.broadcast(perCube(16), 4)).rejects.toThrow(/src must be a rank 0\.\.3, got 4/);
  });

  it("has every other torch.distributed call as a method that says what is supported", () => {
    for (const method of [
      "allGatherObject",
      "gatherObject",
      "scatterObjectList",
      "broadcastObjectList",
      "allReduceCoalesced",
      "monitoredBarrier",
      "newGroup",
      "newSubgroups",
    ] as const) {
      const error = errorOf(() => (pg[method] as () => never)());
      expect(isKbError(error, "RUNTIME_INVALID"), method).toBe(true);
      expect(String(error)).toContain(
        `processGroup.${method} is not supported by the "ahbm" backend; supported: allReduce, reduceScatter, allGather, broadcast, reduce, gather, scatter, allToAll, allToAllSingle, send, recv, isend, irecv, batchIsendIrecv, barrier, getRank, getWorldSize.`,
      );
    }
  });
});
