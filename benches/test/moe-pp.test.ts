import { KbError } from "@kb/errors";
import { Simulator } from "@kb/runtime";
import { describe, expect, test } from "vitest";
import moePp from "../moe-pp.js";
import { launchLogSim, topologyFile } from "./llm-support.js";

// moe-pp end to end: one MoE model placed over pp x ep x tp, the stages' and groups' placement,
// the launches each layer adds for its placement, the table's leading figures (what
// sweeps/placement.yaml reads), every micro-batch verified against the host's layers in order,
// and the placements that do not fit refused with the grid's counts.

// A whole pipeline simulated and replayed: seconds alone, more on a loaded machine.
const SLOW = 240_000;

type Row = readonly (string | number)[];

/** Runs moe-pp with an op log, noting each launch's name and cubes in order, then verifies. */
async function run(topology: string, params: Record<string, unknown>) {
  const { sim, launches, verify } = await launchLogSim(topology);
  const outcome = await moePp.run(sim, moePp.params.parse(params));
  const verification = await verify(outcome ?? undefined);
  const rows: readonly Row[] = outcome?.report?.rows ?? [];
  const figure = (what: string) => rows.find((row) => row[0] === what)?.[5];
  return {
    title: outcome?.report?.title ?? "",
    rows,
    figure,
    launches,
    verdicts: verification.outputs.map((o) => [o.name, o.pass, o.firstMismatch]),
  };
}

/** The refusal of `params` on `topology` (the run throws before simulating anything). */
async function refusal(topology: string, params: Record<string, unknown>): Promise<KbError> {
  const sim = await Simulator.fromTopology(topologyFile(topology));
  const error = await moePp.run(sim, moePp.params.parse(params)).then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(KbError);
  return error as KbError;
}

const sumOf = (cell: string | number | undefined) =>
  String(cell)
    .split(" ")
    .map(Number)
    .reduce((a, b) => a + b, 0);

describe("moe-pp on default.yaml (1 SIP x 2 cubes)", () => {
  test(
    "pp 2 (a stage per cube, ep 1): GPipe order, one send per micro-batch, cubes 2, every micro-batch PASSes",
    async () => {
      const { title, rows, figure, launches, verdicts } = await run("default", {
        dtype: "f32",
        seq: 16,
        pes: 2,
      });
      expect(verdicts).toEqual([
        ["mb0.rank0", true, null],
        ["mb1.rank0", true, null],
      ]);
      expect(title).toContain(
        "pp 2 x ep 1 x tp 1 (stage 0: sip0.cube0; stage 1: sip0.cube1), 2 layer(s) (1 per stage)",
      );
      // GPipe for 2 stages x 2 micro-batches: mb0 on stage 0, mb1 on stage 0, mb0 on stage 1, mb1
      // on stage 1 (tick 1 issues stage 0 before stage 1), each forward's router on its stage's cube.
      expect(launches.filter((name) => name.startsWith("router @"))).toEqual([
        "router @ sip0.cube0",
        "router @ sip0.cube0",
        "router @ sip0.cube1",
        "router @ sip0.cube1",
      ]);
      expect(rows.filter((row) => String(row[0]).startsWith("send ")).length).toBe(2);
      // ep = 1: no all-to-all and no all-gather.
      expect(launches.some((name) => name.startsWith("all-to-all") || name.startsWith("all-gather"))).toBe(
        false,
      );
      expect(rows[0]?.[0]).toBe("makespan");
      expect(rows[1]).toEqual(["cubes (pp x ep x tp)", "", "", "", "", 2, "", "", ""]);
      // 16 tokens x top-2 x 2 layers x 2 micro-batches = 128 assignments, none dropped.
      expect(sumOf(figure("tokens per expert (routed, all layers)"))).toBe(128);
      expect(figure("dropped assignments")).toBe(0);
      // The time by verdict splits every launch's window: its rows add up to the launches' total.
      const bounds = rows.filter((row) => row[0] === "bound by").map((row) => Number(row[5]));
      const total = Number(figure("launch time, all (us)"));
      expect(Math.abs(bounds.reduce((a, b) => a + b, 0) - total)).toBeLessThan(0.01);
      expect(bounds).toEqual([...bounds].sort((a, b) => b - a));
    },
    SLOW,
  );

  test(
    "pp 1 x ep 2 (auto: the SIP's 2 cubes): per layer a dispatch and combine all-to-all and an all-gather; one stage runs the micro-batches back to back",
    async () => {
      const { title, rows, figure, launches, verdicts } = await run("default", {
        dtype: "f32",
        seq: 16,
        pes: 2,
        pp: 1,
      });
      expect(verdicts).toEqual([
        ["mb0.rank0", true, null],
        ["mb0.rank1", true, null],
        ["mb1.rank0", true, null],
        ["mb1.rank1", true, null],
      ]);
      expect(title).toContain("pp 1 x ep 2 x tp 1 (stage 0: sip0.cube0 sip0.cube1)");
      const collectives = launches
        .filter((name) => name.startsWith("ccl."))
        .map((name) => name.split(" @")[0]);
      // 2 layers x 2 micro-batches, each: the attention's all-reduce (o-proj, tp over both cubes),
      // the dispatch and combine all-to-all-v, then the all-gather of the groups' output rows.
      expect(collectives).toEqual(
        Array.from({ length: 4 }, () => [
          "ccl.allReduce.tree",
          "ccl.allToAll.ring",
          "ccl.allToAll.ring",
          "ccl.allGather.ring",
        ]).flat(),
      );
      expect(figure("cubes (pp x ep x tp)")).toBe(2);
      // One stage: nothing overlaps, so the makespan is its forwards' times end to end.
      const forwards = rows.filter((row) => row[0] === "forward").map((row) => Number(row[5]));
      expect(forwards.length).toBe(2);
      expect(
        Math.abs(Number(figure("makespan")) - (forwards[0] as number) - (forwards[1] as number)),
      ).toBeLessThan(0.002);
    },
    SLOW,
  );

  test("placements that do not fit are refused naming the params and the grid's counts", async () => {
    expect((await refusal("default", { pp: 1, ep: 4 })).message).toContain(
      "moe-pp: pp=1 x ep=4 x tp=1 needs 4 cubes (a rank is a cube); this grid has 1 SIP(s) x 2 cube(s) = 2 cubes",
    );
    expect((await refusal("ref-4sip", { pp: 4, ep: 2, sips: 2, layers: 4 })).message).toContain(
      "pp=4 x ep=2 x tp=1: a stage is a SIP (pp up to 2 on this grid, 2 SIP(s) x 4 cube(s) = 8 cubes)",
    );
    expect((await refusal("default", { pp: 1, ep: 3 })).message).toContain(
      "moe-pp: ep=3 does not divide the 8 experts",
    );
    expect((await refusal("default", { pp: 2, layers: 3 })).message).toContain(
      "param pp=2 must divide param layers=3",
    );
    expect((await refusal("ref-4sip", { pp: 2, ep: 2, tp: 2 })).message).toContain(
      "pp=2 x ep=2 x tp=2: a stage's ranks are cubes of one SIP",
    );
    expect((await refusal("ref-4sip", { pp: 1, ep: 8 })).message).toContain(
      "a stage's ep x tp = 8 ranks are cubes of one SIP, and this grid (4 SIP(s) x 4 cube(s) = 16 cubes) has 4 cube(s) per SIP",
    );
    expect(
      (await refusal("ref-4sip", { pp: 1, ep: 4, seq: 6, batch: 1, microBatches: 1 })).message,
    ).toContain("ep=4 expert groups each route an equal slice of a micro-batch's 6 tokens");
  });
});

describe("moe-pp on ref-4sip.yaml (a stage per SIP)", () => {
  test(
    "pp 2 x ep 4 (auto): each stage's 4 cubes of its SIP, sends rank i to rank i of the next SIP, PASS",
    async () => {
      const { title, rows, figure, verdicts } = await run("ref-4sip", {
        dtype: "f32",
        seq: 16,
        pes: 2,
      });
      expect(verdicts.every((v) => v[1] === true)).toBe(true);
      expect(verdicts.map((v) => v[0])).toEqual(["mb0.rank0", "mb0.rank3", "mb1.rank0", "mb1.rank3"]);
      expect(title).toContain(
        "pp 2 x ep 4 x tp 1 (stage 0: sip0.cube0 sip0.cube1 sip0.cube2 sip0.cube3; stage 1: sip1.cube0 sip1.cube1 sip1.cube2 sip1.cube3)",
      );
      expect(rows.filter((row) => row[0] === "send sip0.cube{0,1,2,3} -> sip1.cube{same}").length).toBe(2);
      expect(figure("cubes (pp x ep x tp)")).toBe(8);
    },
    SLOW,
  );
});
