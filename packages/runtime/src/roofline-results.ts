import * as z from "zod";

// The roofline of a launch as the results publish it (`launches[].roofline`), for a chart: the
// ceilings and slopes of the hardware it used and its points. Computed in report/launch-roofline.ts
// from the launch's own figures (peak, traffic, minimal), so the chart and the numbers agree.

const ceilingSchema = z.object({
  engine: z.enum(["gemm", "math"]).describe("PE_GEMM (one ceiling per input dtype) or PE_MATH."),
  dtype: z.string().nullable().describe("The GEMM input dtype of this ceiling; null for PE_MATH."),
  flopsPerS: z
    .number()
    .describe("The peak: peak.gemmFlopsPerSByDtype[dtype] or peak.mathFlopsPerS of the launch, FLOP/s."),
});

const slopeSchema = z.object({
  resource: z.enum(["hbm", "link"]),
  name: z.string().describe('"HBM", or the link as `src -> dst`.'),
  bytesPerS: z
    .number()
    .describe("Its bandwidth, B/s: peak.hbmBytesPerS, or the link's bandwidth (the topology's bw_gbs)."),
});

const pointSchema = z.object({
  traffic: z
    .enum(["hbm", "minimal", "link"])
    .describe(
      "Whose bytes: the actual HBM bytes (hbmBytes), the minimal ones (minimal.hbmBytes), or the busiest link's during the launch.",
    ),
  bytes: z.number().describe("Those bytes."),
  intensity: z.number().describe("flops / bytes: the point's x, FLOP/byte."),
  flopsPerS: z.number().describe("The launch's FLOP/s (roofline.flopsPerS): the point's y."),
});

/** `launches[i].roofline` of the results. */
export const rooflineSchema = z
  .object({
    flops: z.number().describe("gemmFlops + mathFlops of the launch."),
    flopsPerS: z.number().describe("flops / durationNs, FLOP/s (0 for an empty window)."),
    ceilings: z
      .array(ceilingSchema)
      .describe("Horizontal lines: each peak above 0 of the engines that ran during the launch."),
    slopes: z
      .array(slopeSchema)
      .describe(
        "Diagonal lines y = bandwidth x intensity: HBM (its peak above 0) and the busiest link (when one carried traffic).",
      ),
    points: z
      .array(pointSchema)
      .describe(
        "The launch at each traffic it has bytes of (a point needs flops and bytes above 0): actual HBM, minimal HBM, busiest link.",
      ),
  })
  .describe(
    "The launch's roofline chart (docs/reports.md, Roofline): ceilings, slopes and points, from its peak, traffic and minimal fields.",
  );

/** A launch's roofline chart data. */
export type LaunchRoofline = z.infer<typeof rooflineSchema>;
