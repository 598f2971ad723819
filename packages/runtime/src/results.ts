// The results of a run as published: the schema `kb run --json` follows (with its parts in
// spread-results.ts and launch-results.ts) and its types. The computation from a Machine is in
// report/ (collectResults in report/collect.ts).

import * as z from "zod";
import { type Verdict, verdictSchema } from "./bottleneck.js";
import {
  componentEnergySchema,
  type LaunchEnergy,
  launchEnergySchema,
  runEnergySchema,
} from "./energy/summary.js";
import { hostCopiesSchema, type LaunchDetail, launchDetailSchema } from "./launch-results.js";
import { RunManifestSchema } from "./manifest.js";
import { modelStatsSchema } from "./model-stats.js";
import { type LaunchRoofline, rooflineSchema } from "./roofline-results.js";
import { type LaunchSites, launchSitesSchema } from "./sites-results.js";
import { hbmPortsSchema, kindSpreadShape, laneRowsSchema, linksSchema } from "./spread-results.js";
import { nonFiniteCounts, nonFiniteValue, toleranceFields } from "./verification-json.js";

const componentRow = z.object({
  id: z.string(),
  kind: z.string(),
  impl: z.string(),
  busyNs: z.number(),
  ops: z.number(),
  bytes: z.number(),
  flops: z.number(),
  queueFullStalls: z.number(),
  utilisation: z.number(),
  lanes: laneRowsSchema,
  stats: modelStatsSchema,
  energy: componentEnergySchema,
});

/** The results of a run: what `kb run --json` prints. */
export const RunResultsSchema = z.object({
  schema: z.literal("kb.results/1"),
  bench: z.string().nullable().describe("Bench name, or null for a simulator used directly."),
  params: z.record(z.string(), z.unknown()).describe("Bench params after defaults."),
  topology: z.string().describe("Topology name."),
  simTimeNs: z.number().describe("Simulated time at the end of the run, ns."),
  events: z.number().int().describe("DES events processed."),
  launches: z
    .array(
      z.object({
        name: z.string(),
        pes: z.number().int(),
        startNs: z.number(),
        endNs: z.number(),
        gemmFlops: z.number(),
        mathFlops: z.number(),
        hbmBytes: z.number(),
        rooflineNs: z
          .number()
          .describe(
            "The least time the launch's own work could take on the hardware it used: max(work / peak) over GEMM (at peak.gemmFlopsPerS, the best dtype's rate), MATH and the actual HBM bytes, ns.",
          ),
        ...z.object(launchDetailSchema).partial().shape,
        verdict: verdictSchema.optional(),
        roofline: rooflineSchema.optional(),
        sites: launchSitesSchema.optional(),
        energy: launchEnergySchema.optional(),
        overlaps: z
          .array(z.string())
          .optional()
          .describe(
            "Launches of other host streams (Simulator.streams) that ran during part of this one's window; its work, roofline and verdict then include theirs. Absent when none did.",
          ),
      }),
    )
    .describe(
      "Kernel launches in order, each over its kernel window (from the launch to its last PE's completion; host copies are outside it). The fields after rooflineNs are absent in results written before they were reported.",
    ),
  hostCopies: hostCopiesSchema,
  work: z.object({
    gemmFlops: z.number().describe("Arithmetic operations on PE_GEMM (2 m n k per tile)."),
    mathFlops: z.number().describe("Element operations on PE_MATH."),
    hbmBytes: z.number().describe("Bytes read and written at the HBM controllers."),
  }),
  peak: z
    .object({
      gemmFlopsPerS: z
        .number()
        .describe("The PE_GEMMs' best rate over dtypes, FLOP/s: the i8 rate on pe_gemm_v1 and v2."),
      gemmFlopsPerSByDtype: z
        .record(z.string(), z.number())
        .describe(
          "Their rate per input dtype (i8, f16, bf16, f32 and any other that ran), FLOP/s, from each impl's GemmTiming (gemmPeakFlopsPerNs); absent in results written before it was reported.",
        )
        .optional(),
      mathFlopsPerS: z.number(),
      hbmBytesPerS: z.number(),
    })
    .describe("Peaks of the hardware the run used (PEs whose engines ran, HBM stacks it touched)."),
  achieved: z.object({
    flopsPerS: z.number().describe("(gemmFlops + mathFlops) / simulated time."),
    hbmBytesPerS: z.number(),
    gemmFraction: z.number().describe("gemmFlops / simulated time / peak.gemmFlopsPerS."),
    gemmArrayUtilisation: z
      .number()
      .nullable()
      .optional()
      .describe(
        "How much of the MAC arrays did useful work while computing: sum of m n k over the GEMMs run / sum of cycles x R x C, the cycles each PE_GEMM impl charged by its own formula (GemmTiming); null when no PE_GEMM that states its timing ran; absent in results written before it was reported.",
      ),
    hbmFraction: z.number(),
    hbmPortBalance: z
      .object({
        stack: z.string().describe("The HBM controller node with the least even load."),
        ports: z.number().int(),
        meanBusyNs: z.number(),
        maxBusyNs: z.number(),
        minBusyNs: z.number(),
        maxOverMean: z
          .number()
          .describe("maxBusyNs / meanBusyNs over the whole run: 1 is a perfectly even load."),
        windowMaxOverMean: z
          .number()
          .describe(
            "The same within each 10 us window while the stack moved data: sum over windows of the busiest port's bus time / sum of the mean port's. 1 when every port carried the same share at the same time; up to the port count when one port worked alone.",
          ),
      })
      .nullable()
      .optional()
      .describe(
        "How evenly the HBM pseudo-channels carried the traffic (data-bus time per port, from memory models written with defineMemoryModel): the stack with the largest max/mean; null when no such stack moved data; absent in results written before it was reported.",
      ),
  }),
  rooflineNs: z
    .number()
    .describe(
      "The least time the work could take on that hardware: max(work / peak) over GEMM, MATH and HBM.",
    ),
  byKind: z.array(
    z.object({
      kind: z.string(),
      count: z.number().int(),
      busyNs: z.number(),
      ops: z.number(),
      bytes: z.number(),
      flops: z.number(),
      queueFullStalls: z.number(),
      utilisation: z.number().describe("Mean over the kind's components."),
      ...kindSpreadShape,
    }),
  ),
  hbmPorts: hbmPortsSchema,
  links: linksSchema,
  verification: z
    .object({
      pass: z.boolean(),
      outputs: z.array(
        z.object({
          name: z.string(),
          dtype: z.string(),
          shape: z.array(z.number()),
          rtol: z.number(),
          atol: z.number(),
          ...toleranceFields,
          maxAbsError: z
            .number()
            .nullable()
            .describe(
              "Largest |actual - expected| over the elements without a NaN; null when not finite: Inf, or NaN when nothing was measured (every element has a NaN, see actualNonFinite and referenceNonFinite, or a problem).",
            ),
          maxRelError: z.number().nullable(),
          mismatches: z.number().int(),
          firstMismatch: z
            .object({
              index: z.array(z.number()),
              actual: z.number().nullable(),
              expected: z.number().nullable(),
            })
            .nullable()
            .describe("The first element not close; actual and expected are null when not finite."),
          actualNonFinite: nonFiniteCounts
            .optional()
            .describe(
              "NaN and infinities in the output (absent in results written before they were counted).",
            ),
          referenceNonFinite: nonFiniteCounts
            .optional()
            .describe("NaN and infinities in the reference: a NaN there matches nothing and is suspicious."),
          pass: z.boolean(),
          problem: z.string().optional(),
        }),
      ),
      firstNonFinite: z
        .object({
          id: z.number().int().describe("The op record's id in the op log."),
          opName: z.string(),
          opKind: z.enum(["math", "gemm"]),
          componentId: z.string().describe("The component that ran it, e.g. sip0.cube0.pe3.pe_math."),
          tStartNs: z.number().describe("Its simulated start time, ns."),
          dst: z.number().describe("The device address of its output."),
          index: z.number().int().describe("Flat index of the first non-finite element of its output."),
          value: nonFiniteValue,
          inputNonFinite: z
            .boolean()
            .describe(
              "True when its input already held a non-finite value: it passed on the host's data rather than producing one.",
            ),
        })
        .nullable()
        .optional()
        .describe(
          "The first math or GEMM op of the replay whose output held a NaN or an infinity; null when none did (a non-finite output then came from the host's data); absent when not known.",
        ),
    })
    .optional()
    .describe(
      "Phase 2 (kb run --verify): each output against its reference with its dtype's D11 tolerance or the check's own.",
    ),
  phaseCheck: z
    .object({
      observed: z.number().int().describe("tl.loads observed in phase 1 (loads of pending bytes are not)."),
      compared: z.number().int().describe("Observations compared with the dma_read op phase 2 ran for them."),
      differing: z
        .number()
        .int()
        .describe("Observations whose bytes differ from phase 2's (0 when they agree)."),
      unmatched: z
        .number()
        .int()
        .describe("Observations no dma_read op matched, not compared (0 unless kb has a bug)."),
      firstDifference: z
        .object({
          opId: z.number().int().describe("The dma_read op record's id in the op log."),
          opName: z.string(),
          componentId: z.string().describe("The PE_DMA that ran it, e.g. sip0.cube0.pe1.pe_dma."),
          tStartNs: z.number().describe("Its simulated start time, ns: when phase 2 applies it."),
          loadedAtNs: z.number().describe("When the load completed in phase 1 (its bytes were read), ns."),
          kernel: z.string(),
          pe: z.string(),
          site: z.string().nullable().describe("The tl.load call, file:line:col, or null when unknown."),
          src: z.number().describe("Device address read."),
          dst: z.number().describe("TCM address written."),
          byteOffset: z.number().int().describe("Offset of the first differing byte in the loaded tile."),
          phase1: z
            .array(z.number().int())
            .describe("Up to 8 bytes the kernel received, from byteOffset on."),
          phase2: z.array(z.number().int()).describe("The same bytes as phase 2 copied them."),
        })
        .nullable()
        .describe("The first load, in replay order, whose bytes differ; null when the phases agree."),
    })
    .optional()
    .describe(
      "kb run --check-phases: every tl.load's bytes in phase 1 against what phase 2 copied for the same op (comparePhases).",
    ),
  report: z
    .object({
      title: z.string(),
      columns: z.array(z.string()),
      rows: z.array(z.array(z.union([z.string(), z.number()]))),
      series: z
        .array(
          z.object({
            name: z.string(),
            unit: z.string(),
            x: z.array(z.number()).describe("Simulated times, ns, ascending."),
            y: z.array(z.number()).describe("The figure from x[i] on, until the next point."),
          }),
        )
        .optional()
        .describe(
          "Figures over simulated time (llama-serve's KV-cache occupancy and batch size), when the bench gives any.",
        ),
    })
    .optional()
    .describe("The bench's own table (e.g. the all-reduce size sweep), when it returns one."),
  energy: runEnergySchema,
  busiest: z.array(componentRow).describe("The ten busiest components by utilisation."),
  components: z.array(componentRow).describe("Every component that serviced a message."),
  manifest: RunManifestSchema.optional().describe(
    "What went into the run (package and plug-in versions, topology and bench digests, params, seed, options) and its digest, the run's identity: kb run writes it; absent in results written before it was reported and from Simulator.results.",
  ),
});

/** The results of a run. */
export type RunResults = z.infer<typeof RunResultsSchema>;

/** A launch as recorded by the simulator, with the work done during it and its per-launch figures. */
export interface LaunchRecord extends Work, LaunchDetail {
  /** What limited the launch, with its evidence (docs/reports.md). */
  readonly verdict: Verdict;
  /** Its roofline chart data (docs/reports.md, Roofline). */
  readonly roofline: LaunchRoofline;
  /** Per-line attribution (sites.ts), when the simulator tallied it. */
  readonly sites?: LaunchSites;
  /** The energy of the launch's window (docs/energy.md). */
  readonly energy?: LaunchEnergy;
  /**
   * Launches of other host streams (`Simulator.streams`) that ran during part of this one's
   * window, sorted; its work, roofline and verdict are measured over the window, so they include
   * theirs. Absent when none did.
   */
  readonly overlaps?: string[];
  readonly name: string;
  readonly pes: number;
  readonly startNs: number;
  readonly endNs: number;
}

/** Work and the roofline of the hardware that did it. */
export interface Work {
  readonly gemmFlops: number;
  readonly mathFlops: number;
  readonly hbmBytes: number;
  /** max(work / peak) over GEMM flops, MATH flops and HBM bytes; 0 when nothing ran. */
  readonly rooflineNs: number;
  /** Peaks (per ns) of the components that did the work. */
  readonly peaks: { readonly gemm: number; readonly math: number; readonly hbm: number };
}
