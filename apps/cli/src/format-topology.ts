import type { HbmStackPeak } from "@kb/components";
import { formatExactBytes } from "@kb/errors";
import type { LinkSpec, Topology } from "@kb/topology";
import { linkPatternPeers, PE_COMPONENT_NAMES } from "@kb/topology";

/** Counts of a topology, from its spec (and from its expanded graph when one is given). */
export interface TopologyCounts {
  readonly sips: number;
  readonly cubes: number;
  readonly pes: number;
  /** Nodes of the expanded graph, when known. */
  readonly nodes?: number | undefined;
  /** Links of the expanded graph (node pairs joined by at least one edge), when known. */
  readonly links?: number | undefined;
}

/** SIPs, cubes (all SIPs) and PEs (all cubes) of a topology. */
export function specCounts(topology: Topology): TopologyCounts {
  const sips = topology.system.sips;
  const cubes = sips * topology.sip.cubes;
  return { sips, cubes, pes: cubes * topology.cube.noc.rows * topology.cube.noc.cols };
}

/** `S SIP(s), C cube(s), P PE(s)[, N nodes, E links]`: the counts line of `kb topology validate`. */
export function formatCounts(counts: TopologyCounts): string {
  const parts = [`${counts.sips} SIP(s)`, `${counts.cubes} cube(s)`, `${counts.pes} PE(s)`];
  if (counts.nodes !== undefined) parts.push(`${counts.nodes} nodes`);
  if (counts.links !== undefined) parts.push(`${counts.links} links`);
  return parts.join(", ");
}

/** A stack's peak in GB/s: its model's `peak()`, else (a model that states none) PCs x `pc_bw_gbs`. */
function stackGbs(topology: Topology, stack: HbmStackPeak | undefined): number {
  const { hbm } = topology.cube;
  return stack?.bytesPerNs ?? hbm.channels * hbm.pseudo_channels * hbm.pc_bw_gbs;
}

/** GB/s of one pseudo-channel of a stack (its peak over its PCs). */
function perPcGbs(topology: Topology, stack: HbmStackPeak | undefined): number {
  const { hbm } = topology.cube;
  return stackGbs(topology, stack) / (hbm.channels * hbm.pseudo_channels);
}

/** Whose number a stack's per-PC rate is, when it is not `cube.hbm.pc_bw_gbs` (else ""). */
function pcRateNote(topology: Topology, stack: HbmStackPeak | undefined): string {
  const written = topology.cube.hbm.pc_bw_gbs;
  if (stack === undefined || formatNumber(perPcGbs(topology, stack)) === formatNumber(written)) return "";
  return `${stack.impl}'s peak(), not cube.hbm.pc_bw_gbs ${formatNumber(written)}`;
}

/**
 * Links a pattern lays between `count` peers (cubes of a SIP, or SIPs), each pair counted once
 * (see `linkPatternPeers` of `@kb/topology` for the patterns).
 */
export function patternLinkCount(
  pattern: "none" | "ring" | "mesh" | "all_to_all",
  count: number,
  meshCols: number | undefined,
): number {
  let links = 0;
  for (let index = 0; index < count; index++) {
    links += linkPatternPeers(pattern, count, meshCols, index).filter((peer) => peer > index).length;
  }
  return links;
}

/**
 * The human-readable summary of `kb topology show`: a tree host -> SIP -> cube -> PE grid, what
 * every cube and PE is made of, the links, the counts and the peak bandwidths (GB/s). `stacks`
 * are the HBM stacks in graph order (sip-major), each with its model's peak (`hbmStackPeaks` of
 * `@kb/components`): the HBM peaks printed are those, as in `kb probe` and the run results.
 */
export function formatTopology(
  topology: Topology,
  counts: TopologyCounts,
  stacks: readonly HbmStackPeak[],
): string {
  const lines: string[] = [];
  const { cube, sip, system } = topology;
  const stackPeaks = Array.from({ length: counts.cubes }, (_, i) => stackGbs(topology, stacks[i]));
  const firstGbs = stackPeaks[0] ?? 0;
  const perPc = perPcGbs(topology, stacks[0]);
  const note = pcRateNote(topology, stacks[0]);
  const pesPerCube = cube.noc.rows * cube.noc.cols;

  lines.push(`topology ${topology.name}: ${formatCounts(counts)}`);
  if (topology.description !== undefined) lines.push(`  ${topology.description}`);
  lines.push("");

  // The tree.
  lines.push(`host (host link ${formatLink(sip.host_link)} to each SIP)`);
  for (let sipIndex = 0; sipIndex < system.sips; sipIndex++) {
    const lastSip = sipIndex === system.sips - 1;
    lines.push(
      `${lastSip ? "└─" : "├─"} sip${sipIndex}: io_cpu ${sip.io_cpu.impl}, forwards in ${formatNumber(sip.io_cpu.forward_ns)} ns`,
    );
    const sipIndent = lastSip ? "   " : "│  ";
    for (let cubeIndex = 0; cubeIndex < sip.cubes; cubeIndex++) {
      const lastCube = cubeIndex === sip.cubes - 1;
      lines.push(
        `${sipIndent}${lastCube ? "└─" : "├─"} cube${cubeIndex}: ${pesPerCube} PEs (${cube.noc.rows} x ${
          cube.noc.cols
        }), HBM ${formatExactBytes(cube.hbm.capacity_bytes)} at ${formatNumber(
          stackPeaks[sipIndex * sip.cubes + cubeIndex] ?? firstGbs,
        )} GB/s`,
      );
      const cubeIndent = `${sipIndent}${lastCube ? "   " : "│  "}`;
      const width = `pe${pesPerCube - 1}`.length;
      for (let row = 0; row < cube.noc.rows; row++) {
        const names: string[] = [];
        for (let col = 0; col < cube.noc.cols; col++) {
          names.push(`pe${row * cube.noc.cols + col}`.padEnd(width));
        }
        lines.push(`${cubeIndent}   r${row}: ${names.join(" ").trimEnd()}`);
      }
    }
  }
  lines.push("");

  // What every cube is made of.
  const hbm = cube.hbm;
  lines.push("every cube");
  lines.push(
    ...table([
      ["m_cpu", `${cube.m_cpu.impl}${formatParams(cube.m_cpu.params)}`],
      [
        "m_cpu_dma",
        `${cube.m_cpu_dma.impl}, forwards in ${formatNumber(cube.m_cpu_dma.forward_ns)} ns${formatParams(cube.m_cpu_dma.params)}`,
      ],
      [
        "hbm",
        `${hbm.impl}: ${hbm.channels} channels x ${hbm.pseudo_channels} PCs x ${formatNumber(perPc)} GB/s${
          note === "" ? "" : ` (${note})`
        } = ${formatNumber(firstGbs)} GB/s, ${formatExactBytes(hbm.capacity_bytes)}, access ${formatNumber(
          hbm.access_latency_ns,
        )} ns, ${
          hbm.mapping === "interleave" ? `interleave ${hbm.interleave_bytes} B` : `mapping ${hbm.mapping}`
        }, flit ${hbm.flit_bytes} B${hbm.preset === undefined ? "" : `, preset ${hbm.preset}`}${formatParams(hbm.params)}`,
      ],
      [
        "xbar (x 2)",
        `${cube.xbar.impl}, first flit ${formatNumber(cube.xbar.first_flit_ns)} ns${formatParams(cube.xbar.params)}`,
      ],
      [
        "bridge",
        `${cube.bridge.impl}, first flit ${formatNumber(cube.bridge.first_flit_ns)} ns, link ${formatLink(
          cube.bridge.link,
        )} to each xbar half${formatParams(cube.bridge.params)}`,
      ],
      [
        "noc",
        `${cube.noc.rows} x ${cube.noc.cols} routers, ${cube.noc.impl}, first flit ${formatNumber(
          cube.noc.first_flit_ns,
        )} ns, router link ${formatLink(cube.noc.link)}${formatParams(cube.noc.params)}`,
      ],
      [
        "sram",
        `${cube.sram.impl}: ${formatExactBytes(cube.sram.capacity_bytes)}, ${formatNumber(
          cube.sram.bw_gbs,
        )} GB/s, ${formatNumber(cube.sram.latency_ns)} ns${formatParams(cube.sram.params)}`,
      ],
      [
        "ucie_port",
        `${cube.ucie_port.impl}, first flit ${formatNumber(cube.ucie_port.first_flit_ns)} ns${formatParams(
          cube.ucie_port.params,
        )}`,
      ],
    ]),
  );
  lines.push("");

  lines.push("every PE");
  lines.push(
    ...table(
      PE_COMPONENT_NAMES.map((name) => {
        const component = topology.pe_template.components[name];
        return [name, `${component.impl}${formatParams(component.params)}`];
      }),
    ),
  );
  lines.push("");

  // Links.
  const sipLinks = patternLinkCount(system.sip_link.pattern, system.sips, system.sip_link.mesh_cols);
  const ucieLinks = patternLinkCount(sip.ucie.pattern, sip.cubes, sip.ucie.mesh_cols);
  lines.push(`links (wire delay ${formatNumber(topology.wire_delay_ns_per_mm)} ns/mm)`);
  lines.push(
    ...table([
      ["host_link", formatLink(sip.host_link), `host <-> io_cpu, 1 per SIP (${system.sips})`],
      [
        "sip_link",
        `${system.sip_link.pattern}, ${formatLink(system.sip_link)}`,
        `io_cpu <-> io_cpu, ${sipLinks} link(s) between ${system.sips} SIP(s)`,
      ],
      ["io_link", formatLink(sip.io_link), "io_cpu <-> each cube's m_cpu and m_cpu_dma"],
      [
        "ucie",
        `${sip.ucie.pattern}, ${formatLink(sip.ucie)}`,
        `ucie ports between cubes, ${ucieLinks} link(s) per SIP`,
      ],
      ...Object.entries(cube.links).map(([name, link]) => [`cube.${name}`, formatLink(link), ""]),
      ...Object.entries(topology.pe_template.links).map(([name, link]) => [
        `pe.${name}`,
        formatLink(link),
        "",
      ]),
    ]),
  );
  lines.push("");

  if (topology.overrides.length > 0) {
    lines.push("overrides");
    for (const override of topology.overrides) {
      const changes = [
        ...(override.impl === undefined ? [] : [`impl ${override.impl}`]),
        ...(override.params === undefined ? [] : [`params ${JSON.stringify(override.params)}`]),
      ];
      lines.push(`  ${override.match}: ${changes.length === 0 ? "(no change)" : changes.join(", ")}`);
    }
    lines.push("");
  }
  if (topology.plugins.length > 0) {
    lines.push(`plugins: ${topology.plugins.join(", ")}`, "");
  }

  // Counts.
  const channels = counts.cubes * hbm.channels;
  lines.push("counts");
  lines.push(
    ...table([
      ["SIPs", String(counts.sips)],
      ["cubes", `${counts.cubes} (${sip.cubes} per SIP)`],
      ["PEs", `${counts.pes} (${pesPerCube} per cube)`],
      ["HBM channels", `${channels} (${hbm.channels} per stack)`],
      [
        "HBM pseudo-channels",
        `${channels * hbm.pseudo_channels} (${hbm.channels * hbm.pseudo_channels} per stack)`,
      ],
      ...(counts.nodes === undefined ? [] : [["graph nodes", String(counts.nodes)]]),
      ...(counts.links === undefined ? [] : [["graph links", String(counts.links)]]),
    ]),
  );
  lines.push("");

  // Peak bandwidths.
  const links = cube.links;
  const low = Math.min(...stackPeaks);
  const high = Math.max(...stackPeaks);
  const perStack = low === high ? formatNumber(low) : `${formatNumber(low)} to ${formatNumber(high)}`;
  lines.push("peak bandwidth (GB/s)");
  lines.push(
    ...table([
      [
        "HBM",
        `${perStack} per stack (${hbm.channels} x ${hbm.pseudo_channels} x ${formatNumber(perPc)}${
          note === "" ? "" : `; ${note}`
        }), ${formatNumber(stackPeaks.reduce((sum, gbs) => sum + gbs, 0))} total (${counts.cubes} stack(s))`,
      ],
      [
        "PE_DMA -> XBAR",
        `${formatNumber(pesPerCube * links.pe_dma_to_xbar.bw_gbs)} per cube (${pesPerCube} x ${formatNumber(
          links.pe_dma_to_xbar.bw_gbs,
        )})`,
      ],
      [
        "XBAR -> HBM",
        `${formatNumber(hbm.channels * links.xbar_to_hbm.bw_gbs)} per cube (${hbm.channels} channels x ${formatNumber(
          links.xbar_to_hbm.bw_gbs,
        )})`,
      ],
      [
        "host",
        `${formatNumber(sip.host_link.bw_gbs)} per SIP, ${formatNumber(sip.host_link.bw_gbs * system.sips)} total`,
      ],
      [
        "UCIe",
        `${formatNumber(sip.ucie.bw_gbs)} per link, ${formatNumber(
          sip.ucie.bw_gbs * ucieLinks * system.sips,
        )} total over ${ucieLinks * system.sips} link(s)`,
      ],
      [
        "SIP links",
        `${formatNumber(system.sip_link.bw_gbs)} per link, ${formatNumber(
          system.sip_link.bw_gbs * sipLinks,
        )} total over ${sipLinks} link(s)`,
      ],
    ]),
  );
  return `${lines.join("\n")}\n`;
}

/** `128 GB/s, 5 mm` or `100 GB/s, 500 ns` (a link with neither has latency 0). */
function formatLink(link: LinkSpec): string {
  const delay =
    link.latency_ns !== undefined
      ? `${formatNumber(link.latency_ns)} ns`
      : `${formatNumber(link.length_mm ?? 0)} mm`;
  return `${formatNumber(link.bw_gbs)} GB/s, ${delay}`;
}

function formatParams(params: Record<string, unknown>): string {
  return Object.keys(params).length === 0 ? "" : ` ${JSON.stringify(params)}`;
}

/** A number with at most three decimals and no float noise: 819.2, not 819.1999999999999. */
export function formatNumber(value: number): string {
  return String(Math.round(value * 1000) / 1000);
}

/** Left-aligned columns, indented by two spaces; trailing blanks trimmed. */
function table(rows: readonly (readonly string[])[]): string[] {
  const widths: number[] = [];
  for (const row of rows) {
    row.forEach((cell, index) => {
      widths[index] = Math.max(widths[index] ?? 0, cell.length);
    });
  }
  return rows.map((row) =>
    `  ${row.map((cell, index) => (index === row.length - 1 ? cell : cell.padEnd(widths[index] ?? 0))).join("  ")}`.trimEnd(),
  );
}
