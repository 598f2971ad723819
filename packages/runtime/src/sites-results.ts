import * as z from "zod";

// The `sites` part of a launch in the results schema (see `RunResultsSchema`); the tallies are
// made in sites.ts. docs/reports.md ("By line") says what each figure means.

/** One kernel line of a launch. */
export const siteRowSchema = z.object({
  line: z.string().describe("The kernel line: `file:line` (the file relative to the working directory)."),
  calls: z.array(z.string()).describe('The tl calls made on that line ("load", "dot", ...), sorted.'),
  count: z.number().int().describe("Calls made there, summed over the launch's programs."),
  waitNs: z
    .number()
    .describe(
      "The programs' time waiting on those calls, summed over programs: from each command's hand-off to its PE_CPU until the PE_CPU took the program's next command (a synchronous command's whole run, an async one's hand-off; a tl.wait's wait), ns.",
    ),
  share: z.number().describe("waitNs / programNs: the line's share of the launch's program time."),
  busyNs: z
    .record(z.string(), z.number())
    .describe(
      "Engine time of the tiles of its commands, by component kind (PE_DMA, PE_GEMM, PE_MATH, ...), summed over components and lanes, ns.",
    ),
  bytes: z
    .number()
    .describe("Bytes its commands moved: DMA copies (masked: the runs copied) and IPCQ sends."),
});

/** A launch's lines (`RunResults.launches[].sites`). */
export const launchSitesSchema = z
  .object({
    programNs: z
      .number()
      .describe(
        "The launch's program time: every program's time from its first command's hand-off to its end, summed over programs, ns (the denominator of share).",
      ),
    lines: z.array(siteRowSchema).describe("Every kernel line that issued a command, most waitNs first."),
  })
  .describe(
    "Per-line attribution: each kernel line's calls, wait, engine time and bytes (docs/reports.md, By line); absent in results written before it was reported.",
  );

/** One kernel line of a launch. */
export type SiteRow = z.infer<typeof siteRowSchema>;
/** A launch's lines. */
export type LaunchSites = z.infer<typeof launchSitesSchema>;
