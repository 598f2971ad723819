import { defaultRegistry } from "@kb/builtins";
import { buildMachineFromFile, loadTopologyPlugins } from "@kb/components/node";
import { formatFixed } from "@kb/errors";
import { type ProbeCase, type ProbeReport, runProbe } from "@kb/probe";
import { PLUGIN_SHARED_MODULES } from "@kb/runtime/node";
import type { Command } from "commander";
import { locateTopology } from "./bench-files.js";
import { formatNumber } from "./format-topology.js";
import type { CliIo, RunState } from "./run-cli.js";

/** Options of `kb probe` as commander parses them. */
interface ProbeCommandOptions {
  topology?: string;
  json?: boolean;
  plugin?: string[];
}

/** Adds `kb probe` to the program. */
export function addProbeCommand(program: Command, io: CliIo, state: RunState): Command {
  return program
    .command("probe")
    .summary("measure a catalog of transfers and GEMMs against the latency formulas and check invariants")
    .description(
      "Run a catalog of 32 KiB transfers, each on a fresh machine built from the topology: H2D and " +
        "D2H, PE DMA reads and writes at four placements (a channel on the PE's own XBAR half, the " +
        "other half through the bridge, a neighbouring cube over UCIe, the farthest pseudo-channel), a " +
        "contiguous read spread over the pseudo-channels, and a sweep of 1 to all PEs of a cube " +
        "reading one pseudo-channel at once; then three GEMMs on the PE's PE_GEMM (the scheduler's " +
        "tile, 32^3, one row of the tile). Prints for each the formula time (from idealTransferNs " +
        "and the HBM access latency; for a GEMM, the PE_GEMM impl's own formula), the measured time " +
        "and their ratio, then the invariants: measured >= formula, uncontended within 1%, latency " +
        "monotonic in utilisation, D2H >= H2D, best placement < worst, each GEMM at its impl's " +
        "formula. The 1% checks hold only impls that declare themselves analytic (the built-ins of " +
        "docs/latency-model.md); " +
        "for a plug-in model they are reported as not checked, with the measured-to-formula ratio. " +
        "Exit code 1 when an invariant fails.",
    )
    .option(
      "--topology <file|name>",
      "topology YAML file, or a name looked up as topologies/NAME.yaml from the current directory up, then among the topologies kb ships (default: default)",
    )
    .option(
      "--json",
      "print the report as JSON instead: { topology, bytes, requester, cases, sweep, gemm, invariants, pass, hbmPeak }",
    )
    .option(
      "--plugin <package...>",
      "also load these plug-ins: npm package names, or paths (./my-hbm, ./my-hbm.ts, a package directory) from the current directory",
    )
    .addHelpText(
      "after",
      "\nExamples:\n" +
        "  kb probe\n" +
        "  kb probe --topology topologies/ref-4sip.yaml\n" +
        "  kb probe --topology my-design.yaml --plugin kb-plugin-banked-hbm --json > probe.json",
    )
    .action(async (options: ProbeCommandOptions) => {
      const file = locateTopology(options.topology ?? "default", process.cwd());
      const extra = options.plugin ?? [];
      // Builds one machine first: impl and params errors come back located in the file.
      const { topology, graph } = await buildMachineFromFile(file, {
        registryFor: defaultRegistry,
        shared: PLUGIN_SHARED_MODULES,
        plugins: extra,
      });
      const plugins = await loadTopologyPlugins(file, topology, extra, PLUGIN_SHARED_MODULES);
      const report = runProbe(graph, { plugins });
      io.stdout.write(
        options.json === true ? `${JSON.stringify(report, null, 2)}\n` : formatProbe(report, file),
      );
      if (!report.pass) state.exitCode = 1;
    });
}

// -------------------------------------------------------------------------------------------------
// The human report

/**
 * The report of `kb probe` as text: the cases as an aligned table (route summary, bytes, formula,
 * measured, ratio), how the formula and the measurement are defined, the full routes, the sweep,
 * the GEMMs (cycles, formula, measured, ratio, array utilisation), then each invariant as PASS /
 * FAIL / SKIP with its numbers (and, under it, what it did not check and why: a non-analytic impl)
 * and a verdict line.
 */
export function formatProbe(report: ProbeReport, file: string): string {
  const lines: string[] = [];
  const cube = report.requester.slice(0, report.requester.lastIndexOf("."));
  const short = (id: string): string => shortId(id, cube);
  lines.push(
    `probe of topology ${report.topology} (${file}): ${formatBytes(report.bytes)} per transfer, each case on a fresh machine; DMA cases on ${report.requester}`,
  );
  if (report.mappingReplaced !== undefined) {
    lines.push(
      `blocks placed with cube.hbm.mapping interleave instead of ${report.mappingReplaced}, so each per-PC case is one pseudo-channel (a mapping decides which PC holds an address, not how a PC is timed)`,
    );
  }
  const { hbmPeak } = report;
  if (hbmPeak.bytesPerNs !== null) {
    lines.push(
      `HBM peak of ${hbmPeak.id}: ${formatNumber(hbmPeak.bytesPerNs)} GB/s (${hbmPeak.impl}'s peak(), ${hbmPeak.ports} pseudo-channels x ${formatNumber(hbmPeak.bytesPerNs / hbmPeak.ports)} GB/s)`,
    );
  } else {
    lines.push(`HBM peak of ${hbmPeak.id}: not stated by ${hbmPeak.impl}'s model (it has no peak())`);
  }
  lines.push("");
  lines.push(
    ...table(
      ["case", "route (data direction)", "bytes", "formula ns", "measured ns", "ratio"],
      report.cases.map((entry) => [
        entry.name,
        routeSummary(entry, short),
        String(entry.bytes),
        formatFixed(entry.formulaNs, 2),
        formatFixed(entry.measuredNs, 2),
        formatFixed(entry.ratio, 4),
      ]),
      [false, false, true, true, true, true],
    ),
  );
  lines.push("");
  lines.push(
    "formula (docs/latency-model.md §2-3; routes as the fabric takes them, PE_DMA's NOC egress included):",
  );
  lines.push(
    "  write (h2d, dma-write-*): idealTransferNs(route, B) + access_latency_ns (complete when committed)",
  );
  lines.push(
    "  read (d2h, dma-read-*):   idealTransferNs(request, 0) + access_latency_ns + idealTransferNs(response, B)",
  );
  lines.push(
    "  (min(bw) leaves out the PC's own bus; the formula takes the larger of B / min(bw) and the PC bus's ceil(B / flit_bytes) flits at the controller's rate, its peak() / PCs)",
  );
  lines.push(
    "  each block sits in one pseudo-channel (rows of at most interleave_bytes, one interleave stripe apart): one packet, one route",
  );
  const dma = report.cases.find((entry) => entry.requester !== "host");
  if (dma !== undefined) {
    lines.push(
      `  dma-* measured: submit to completion minus ${formatFixed(dma.fixedNs, 2)} ns fixed on the PE (pe_cpu.dispatch_ns + pe_mmu.miss_ns per page + pe_dma.setup_ns)`,
    );
  }
  const nonAnalytic = new Map<string, string[]>();
  for (const entry of [...report.cases, ...report.sweep]) {
    for (const { id, impl } of entry.nonAnalytic) {
      const ids = nonAnalytic.get(impl) ?? [];
      if (!ids.includes(id)) ids.push(id);
      nonAnalytic.set(impl, ids);
    }
  }
  if (nonAnalytic.size > 0) {
    lines.push(
      `  not analytic (their cases are held to measured >= formula, not to within 1%): ${[...nonAnalytic]
        .map(([impl, ids]) => `${impl} (${ids.join(", ")})`)
        .join(", ")}`,
    );
  }
  const spread = report.cases.find((entry) => entry.placement === "spread");
  if (spread !== undefined && spread.pcs > 1) {
    lines.push(
      `  ${spread.name}: one contiguous block over ${spread.pcs} PCs; formula = the slowest PC's share alone, a lower bound (the packets share the PE's links)`,
    );
  }
  lines.push("");
  lines.push("routes");
  lines.push(
    ...table(
      [],
      report.cases.map((entry) => [entry.name, entry.route.map(short).join(" > ")]),
      [],
    ),
  );

  if (report.sweep.length > 0) {
    const first = report.sweep[0];
    lines.push("");
    lines.push(
      `utilisation sweep: N PEs of ${cube} (nearest first) each read ${formatBytes(report.bytes)} from ${first?.memory} at once`,
    );
    lines.push(
      ...table(
        ["PEs", "formula ns", "mean ns", "max ns", "mean/formula", "GB/s"],
        report.sweep.map((point) => [
          String(point.pes),
          formatFixed(point.formulaNs, 2),
          formatFixed(point.meanNs, 2),
          formatFixed(point.maxNs, 2),
          formatFixed(point.ratio, 4),
          formatFixed(point.gbs, 2),
        ]),
        [true, true, true, true, true, true],
      ),
    );
  }

  if (report.gemm.length > 0) {
    const first = report.gemm[0];
    lines.push("");
    lines.push(
      `GEMM on ${first?.engine} (${first?.impl}), f16, each alone on a fresh machine: formula = the impl's own cycles / freq_ghz, measured = submit to completion minus pe_cpu.dispatch_ns`,
    );
    const fixed = (value: number | null, digits: number): string =>
      value === null ? "-" : formatFixed(value, digits);
    lines.push(
      ...table(
        ["case", "m x n x k", "cycles", "formula ns", "measured ns", "ratio", "array util"],
        report.gemm.map((entry) => [
          entry.name,
          `${entry.m}x${entry.n}x${entry.k}`,
          entry.cycles === null ? "-" : String(entry.cycles),
          fixed(entry.formulaNs, 2),
          formatFixed(entry.measuredNs, 2),
          fixed(entry.ratio, 4),
          entry.utilisation === null ? "-" : `${formatFixed(entry.utilisation * 100, 1)}%`,
        ]),
        [false, true, true, true, true, true, true],
      ),
    );
    lines.push(
      "  array util = m n k / (cycles x mac_rows x mac_cols): the MAC array's share doing useful work",
    );
  }

  lines.push("");
  lines.push("invariants");
  for (const invariant of report.invariants) {
    lines.push(`  ${invariant.status.toUpperCase().padEnd(4)}  ${invariant.title}: ${invariant.detail}`);
    if (invariant.notChecked !== undefined) lines.push(`        not checked: ${invariant.notChecked}`);
  }
  const failed = report.invariants.filter((invariant) => invariant.status === "fail").length;
  const skipped = report.invariants.filter((invariant) => invariant.status === "skip").length;
  const partly = report.invariants.filter(
    (invariant) => invariant.status !== "skip" && invariant.notChecked !== undefined,
  ).length;
  const checked = report.invariants.length - skipped;
  const notes = [skipped > 0 ? `${skipped} skipped` : "", partly > 0 ? `${partly} checked in part` : ""];
  const skippedText = notes.some((note) => note !== "")
    ? ` (${notes.filter((note) => note !== "").join(", ")})`
    : "";
  lines.push(
    failed > 0
      ? `FAIL: ${failed} of ${checked} invariant(s) failed${skippedText}`
      : `PASS: ${checked} of ${checked} invariant(s) hold${skippedText}`,
  );
  return `${lines.join("\n")}\n`;
}

/** `host -> cube0.ch0.pc0, 5 hops` (writes) or `cube0.ch0.pc0 -> pe0, 3 hops` (reads). */
function routeSummary(entry: ProbeCase, short: (id: string) => string): string {
  const requester = short(entry.requester);
  const memory = entry.pcs > 1 ? `${entry.pcs} PCs from ${short(entry.memory)}` : short(entry.memory);
  const ends = entry.kind === "h2d" || entry.kind === "dma_write" ? [requester, memory] : [memory, requester];
  return `${ends.join(" -> ")}, ${entry.hops} hops`;
}

/** A node id without the requester's `sip.cube.` prefix (or its `sip.`) and without `.hbm`. */
function shortId(id: string, cube: string): string {
  const sip = cube.slice(0, cube.indexOf(".") + 1);
  const plain = id.replace(".hbm.", ".");
  if (plain.startsWith(`${cube}.`)) return plain.slice(cube.length + 1);
  if (sip !== "" && plain.startsWith(sip)) return plain.slice(sip.length);
  return plain;
}

function formatBytes(bytes: number): string {
  return bytes % 1024 === 0 ? `${bytes / 1024} KiB` : `${bytes} B`;
}

/** Rows padded to aligned columns (numbers right-aligned), two spaces apart, indented by two. */
function table(
  header: readonly string[],
  rows: readonly (readonly string[])[],
  right: readonly boolean[],
): string[] {
  const all = header.length > 0 ? [header, ...rows] : rows;
  const widths: number[] = [];
  for (const row of all) {
    row.forEach((cell, index) => {
      widths[index] = Math.max(widths[index] ?? 0, cell.length);
    });
  }
  return all.map(
    (row) =>
      `  ${row
        .map((cell, index) => {
          const last = index === row.length - 1;
          if (right[index] === true) return cell.padStart(widths[index] as number);
          return last ? cell : cell.padEnd(widths[index] as number);
        })
        .join("  ")}`,
  );
}
