import * as z from "zod";

// The parts of the results schema about launches and host copies (see `RunResultsSchema`); the
// computation is in report/launch-work.ts.

/** `RunResults.hostCopies`: the host copies, apart from the launches. */
export const hostCopiesSchema = z
  .object({
    count: z.number().int().describe("Host copies (sim.copyToDevice, toDevice, fromDevice)."),
    bytes: z.number().describe("Bytes they moved."),
    ns: z.number().describe("Simulated time they took, summed, ns."),
  })
  .optional()
  .describe(
    "The host <-> HBM copies, apart from the launches (their HBM bytes count in work.hbmBytes); absent in results written before they were reported.",
  );

/** The per-launch fields beyond name, PEs, window, work and `rooflineNs` (see `RunResultsSchema`). */
export const launchDetailSchema = {
  durationNs: z.number().describe("The kernel window: endNs - startNs, ns (no host copies)."),
  gemmFlopsByDtype: z
    .record(z.string(), z.number())
    .describe(
      'gemmFlops by input dtype ("f16", "i8", ...; "unknown" for a PE_GEMM impl that does not count by dtype).',
    ),
  traffic: z
    .object({
      hbmBytes: z.number().describe("Bytes read and written at the HBM controllers (= hbmBytes)."),
      dmaBytes: z.number().describe("Bytes the PE_DMAs moved (loads and stores, HBM or SRAM)."),
      fabricLinkBytes: z
        .number()
        .describe(
          "Bytes carried by the fabric's links, summed over every hop (a packet counts once per link).",
        ),
      tcmBytes: z.number().describe("Bytes PE_TCM served (its requests: fetches and stores of the engines)."),
      fetchStoreBytes: z.number().describe("Bytes PE_FETCH_STORE moved TCM -> registers and back."),
    })
    .describe("Bytes moved per level of the memory hierarchy during the launch."),
  minimal: z
    .object({
      hbmReadBytes: z
        .number()
        .describe("Distinct HBM bytes the kernel's PE_DMAs read: each address range counted once."),
      hbmWriteBytes: z.number().describe("Distinct HBM bytes they wrote, each counted once."),
      hbmBytes: z.number().describe("hbmReadBytes + hbmWriteBytes: the least HBM traffic the launch needs."),
      rooflineNs: z
        .number()
        .describe(
          "rooflineNs with minimal.hbmBytes in place of the actual HBM bytes (GEMM, MATH terms as rooflineNs), ns.",
        ),
      efficiency: z.number().describe("minimal.rooflineNs / durationNs (0 for an empty window)."),
    })
    .describe(
      "The launch's minimal traffic (PE_DMA blocks in HBM merged as address intervals, reads and writes apart) and its roofline.",
    ),
  bounds: z
    .object({
      gemmNs: z
        .number()
        .describe(
          "Sum over dtypes of gemmFlopsByDtype / the PE_GEMMs' peak for that dtype, ns: the GEMM term at the rate of the dtypes the launch ran (rooflineNs uses the best dtype's).",
        ),
      mathNs: z.number().describe("mathFlops / peak.mathFlopsPerS, ns."),
      hbmNs: z.number().describe("hbmBytes / peak.hbmBytesPerS, ns."),
      minimalHbmNs: z.number().describe("minimal.hbmBytes / peak.hbmBytesPerS, ns."),
    })
    .describe("Each term of the roofline on its own: the time the work would take at that peak."),
  boundBy: z
    .enum(["gemm", "math", "hbm", "none"])
    .describe(
      "The largest term of rooflineNs (GEMM at the best dtype's rate, MATH, actual HBM bytes): what bounds the launch on paper; bounds.gemmNs may exceed it when the GEMMs ran a slower dtype.",
    ),
  peak: z
    .object({
      gemmFlopsPerS: z
        .number()
        .describe("The PE_GEMMs' best rate over dtypes (the i8 rate on the built-in engines), FLOP/s."),
      gemmFlopsPerSByDtype: z.record(z.string(), z.number()).describe("Their rate per input dtype, FLOP/s."),
      mathFlopsPerS: z.number(),
      hbmBytesPerS: z.number(),
    })
    .describe("Peaks of the hardware the launch used (engines that ran during it, HBM stacks it touched)."),
  achieved: z
    .object({
      gemmFlopsPerS: z.number().describe("gemmFlops / durationNs, FLOP/s."),
      mathFlopsPerS: z.number().describe("mathFlops / durationNs, FLOP/s."),
      hbmBytesPerS: z.number().describe("hbmBytes / durationNs, B/s."),
      fabricLinkBytesPerS: z.number().describe("traffic.fabricLinkBytes / durationNs, B/s."),
      gemmFraction: z
        .number()
        .describe("bounds.gemmNs / durationNs: the GEMM rate against the peak of each dtype it ran."),
      mathFraction: z.number().describe("mathFlops / durationNs / peak.mathFlopsPerS."),
      hbmFraction: z.number().describe("hbmBytes / durationNs / peak.hbmBytesPerS."),
    })
    .describe("Rates during the kernel window (0 for an empty window)."),
  efficiency: z
    .number()
    .describe("rooflineNs / durationNs: 1 when the launch ran at its roofline (0 for an empty window)."),
  dtypeRooflineNs: z
    .number()
    .describe(
      "max(bounds.gemmNs, bounds.mathNs, bounds.hbmNs): the roofline with GEMM at the peak of the dtypes the launch ran (an f16 GEMM at the f16 rate, where rooflineNs takes the best dtype's), ns.",
    ),
  dtypeEfficiency: z
    .number()
    .describe(
      "dtypeRooflineNs / durationNs: how close the launch came to what its dtypes allow (0 for an empty window).",
    ),
};

/** The per-launch fields beyond the ones `LaunchRecord` had before. */
export type LaunchDetail = z.infer<z.ZodObject<typeof launchDetailSchema>>;
