import { isKbError } from "@kb/errors";
import { HBM_NODE_KEYS, hbmPresetNameSchema } from "@kb/spec";
import * as z from "zod";
import { type HbmOrganisation, hbmAddressMap } from "./hbm-mapping.js";
import { NOC_ROUTINGS } from "./noc-routing.js";
import { topologyLimitIssues } from "./topology-limits.js";

/**
 * The topology format, as a zod schema. Keys are snake_case with their unit in the name (`_gbs` =
 * GB/s = bytes per ns, `_ns`, `_mm`, `_bytes`, `_ghz`); every object is strict (unknown keys are
 * errors); every default is stated here and visible in the JSON Schema and in `kb topology show
 * --resolved`.
 */

const count = (description: string) => z.number().int().min(1).describe(description);

/**
 * The range of the physical numbers of a topology. Outside it a value is a typo or a hostile
 * file, not a design point: a 1e300 ns latency makes every rate of a report 1e-290 B/s and sums
 * overflow to Infinity. Wide enough for any design: from a wire to a rack.
 */
export const PHYSICAL_LIMITS = Object.freeze({
  /** A latency, an access time, a per-hop or forwarding overhead: at most 1 s, in ns. */
  maxNs: 1e9,
  /** A bandwidth: at least 1 MB/s, in GB/s. */
  minGbs: 1e-3,
  /** A bandwidth: at most 1 PB/s, in GB/s. */
  maxGbs: 1e6,
  /** A wire length: at most 1 km, in mm. */
  maxMm: 1e6,
  /** A wire delay: at most 1 µs per mm, in ns/mm. */
  maxNsPerMm: 1e3,
});

/** A time in ns, 0 to {@link PHYSICAL_LIMITS}`.maxNs`. */
const nanoseconds = (description: string) =>
  z.number().min(0).max(PHYSICAL_LIMITS.maxNs).describe(`${description} At most 1e9 (1 s).`);
/** A bandwidth in GB/s within {@link PHYSICAL_LIMITS}. */
const gigabytesPerSecond = (description: string) =>
  z
    .number()
    .min(PHYSICAL_LIMITS.minGbs)
    .max(PHYSICAL_LIMITS.maxGbs)
    .describe(`${description} From 0.001 (1 MB/s) to 1e6 (1 PB/s).`);

/**
 * A link: bandwidth plus either an explicit latency or a physical length (latency = length x the
 * topology's `wire_delay_ns_per_mm`). With neither, the latency is 0.
 */
/** Which pairs of SIPs (or cubes of a SIP) a link pattern connects. */
export const linkPatternSchema = z
  .enum(["none", "ring", "mesh", "all_to_all"])
  .describe(
    "none; ring (i <-> i+1, wrapping); mesh (grid of mesh_cols columns, right and down neighbours); all_to_all.",
  );

const linkShape = z.strictObject({
  bw_gbs: gigabytesPerSecond("Bandwidth in GB/s (1 GB/s = 1 byte/ns)."),
  length_mm: z
    .number()
    .min(0)
    .max(PHYSICAL_LIMITS.maxMm)
    .optional()
    .describe("Wire length in mm; latency = length_mm x wire_delay_ns_per_mm. At most 1e6 (1 km)."),
  latency_ns: nanoseconds("Explicit latency in ns (instead of length_mm).").optional(),
});

function lengthOrLatency<
  T extends z.ZodType<{ length_mm?: number | undefined; latency_ns?: number | undefined }>,
>(schema: T) {
  return schema.refine((link) => link.length_mm === undefined || link.latency_ns === undefined, {
    message: "give either length_mm or latency_ns, not both.",
  });
}

export const linkSchema = lengthOrLatency(linkShape).describe(
  "A link: bandwidth and either length_mm or latency_ns.",
);

/** A link between peers laid out by a pattern (inter-cube UCIe, inter-SIP). */
const patternLinkSchema = (defaultPattern: z.output<typeof linkPatternSchema>, what: string) =>
  lengthOrLatency(
    linkShape.extend({
      pattern: linkPatternSchema.default(defaultPattern),
      mesh_cols: count(
        `Columns of the ${what} grid for the mesh pattern (default: the square root, rounded up).`,
      ).optional(),
    }),
  );

/**
 * A component instance: its kind, the implementation that times it (a built-in name or
 * `"@scope/pkg:impl_name"` from a plug-in) and the implementation's parameters (validated later
 * by the implementation's own schema).
 */
export const componentSchema = (kind: string, impl: string) =>
  z
    .strictObject({
      kind: z.literal(kind).default(kind).describe(`Component kind; always "${kind}" here.`),
      impl: z
        .string()
        .min(1)
        .default(impl)
        .describe('Implementation: a built-in name or "@scope/pkg:impl_name" from a plug-in.'),
      params: z.record(z.string(), z.unknown()).default({}).describe("Parameters of the implementation."),
    })
    .describe(`The ${kind} component.`);

/** A forwarding ("transit") component: routers, XBAR halves, bridge, UCIe ports. */
const transitSchema = (kind: string, impl = "transit_v1") =>
  componentSchema(kind, impl).extend({
    first_flit_ns: nanoseconds("Per-hop overhead of the first flit, in ns.").default(1),
  });

/**
 * The check of a component whose `key` (`first_flit_ns`, `forward_ns`) the topology writes into
 * its nodes' params, over its `params`: the same key under `params` would be silently replaced,
 * so it is refused there, pointing to `<where>.<key>` (an override's `params` may still set it
 * per node).
 */
const ownHopKey =
  (where: string, nodes: string, key: "first_flit_ns" | "forward_ns") =>
  (
    component: { readonly params: Record<string, unknown> } & Partial<Record<typeof key, number>>,
    context: z.RefinementCtx,
  ) => {
    if (!Object.hasOwn(component.params, key)) return;
    context.addIssue({
      code: "custom",
      path: ["params", key],
      message: `${where} sets ${key} for every ${nodes} node, over its params (${JSON.stringify(component.params[key])} would be replaced by ${component[key]}); write it as ${where}.${key} instead.`,
    });
  };

const PE_COMPONENTS = {
  pe_cpu: "pe_cpu_v1",
  pe_scheduler: "pe_scheduler_v2",
  pe_dma: "pe_dma_v1",
  pe_fetch_store: "pe_fetch_store_v1",
  pe_gemm: "pe_gemm_v1",
  pe_math: "pe_math_v1",
  pe_mmu: "pe_mmu_v1",
  pe_tcm: "pe_tcm_v1",
} as const;

/** The component names of a PE, in template order. */
export const PE_COMPONENT_NAMES = Object.keys(PE_COMPONENTS) as (keyof typeof PE_COMPONENTS)[];

const link = (bwGbs: number, lengthMm: number) => linkSchema.default({ bw_gbs: bwGbs, length_mm: lengthMm });

/** The PE template: eight components and the links between them (ADR-0021 D7). */
export const peTemplateSchema = z
  .strictObject({
    components: z
      .strictObject({
        pe_cpu: componentSchema("pe_cpu", PE_COMPONENTS.pe_cpu).prefault({}),
        pe_scheduler: componentSchema("pe_scheduler", PE_COMPONENTS.pe_scheduler).prefault({}),
        pe_dma: componentSchema("pe_dma", PE_COMPONENTS.pe_dma).prefault({}),
        pe_fetch_store: componentSchema("pe_fetch_store", PE_COMPONENTS.pe_fetch_store).prefault({}),
        pe_gemm: componentSchema("pe_gemm", PE_COMPONENTS.pe_gemm).prefault({}),
        pe_math: componentSchema("pe_math", PE_COMPONENTS.pe_math).prefault({}),
        pe_mmu: componentSchema("pe_mmu", PE_COMPONENTS.pe_mmu).prefault({}),
        pe_tcm: componentSchema("pe_tcm", PE_COMPONENTS.pe_tcm).prefault({}),
      })
      .prefault({}),
    links: z
      .strictObject({
        control: link(64, 0).describe("PE_CPU -> PE_SCHEDULER and the scheduler's dispatch to each engine."),
        dma_to_tcm: link(256, 0).describe("PE_DMA <-> PE_TCM."),
        dma_to_fetch_store: link(256, 0).describe("PE_DMA <-> PE_FETCH_STORE (chaining, writeback)."),
        fetch_store_to_tcm: link(512, 0).describe("PE_FETCH_STORE -> PE_TCM (bandwidth requests)."),
        fetch_store_to_engines: link(512, 0).describe("PE_FETCH_STORE <-> PE_GEMM and PE_MATH."),
        dma_to_mmu: link(64, 0).describe("PE_DMA <-> PE_MMU (translation)."),
      })
      .prefault({}),
  })
  .describe("What every PE is made of (per-instance changes go in overrides).");

/** The HBM stack of a cube: channels x pseudo-channels, address-interleaved. */
export const hbmSchema = componentSchema("hbm_ctrl", "hbm_ctrl_v1").extend({
  channels: count("Channels per stack.").default(8),
  pseudo_channels: count("Pseudo-channels per channel.").default(2),
  pc_bw_gbs: gigabytesPerSecond("Bandwidth of one pseudo-channel in GB/s.").default(32),
  access_latency_ns: nanoseconds("Access latency of a pseudo-channel in ns.").default(40),
  interleave_bytes: z
    .number()
    .int()
    .min(16)
    .default(256)
    .describe("Address interleave granularity across channels, then pseudo-channels, in bytes."),
  flit_bytes: z
    .number()
    .int()
    .min(1)
    .default(64)
    .describe("Flit size: data commits on its pseudo-channel a flit at a time."),
  capacity_bytes: z
    .number()
    .int()
    .min(1)
    .default(16 * 2 ** 30)
    .describe("Capacity of the stack in bytes."),
  mapping: z
    .string()
    .default("interleave")
    .describe(
      "Address mapping: interleave (units of interleave_bytes over channels, then pseudo-channels), xor (bank-group interleave with channel, pseudo-channel and bank bits XOR-folded with higher bits), mop4clxor (Ramulator's MOP4CLXOR), or a bit-order string MSB first such as RoBaBgSiPcCo4ChCo1. See docs/latency-model.md.",
    ),
  preset: hbmPresetNameSchema
    .optional()
    .describe("A JEDEC part whose timing a bank-aware controller (hbm_ctrl_v2) uses."),
  sids: count("Stack IDs (ranks) per pseudo-channel.").default(1),
  bank_groups: count("Bank groups per SID.").default(4),
  banks_per_group: count("Banks per bank group.").default(4),
  row_bytes: count("Row (page) size of a pseudo-channel's bank in bytes.").default(1024),
  burst_bytes: count("Bytes of one column access (pseudo-channel width x burst length / 8).").default(32),
});

/** The organisation of a cube's HBM stack as the address mapping sees it. */
export function hbmOrganisationOf(hbm: z.output<typeof hbmSchema>): HbmOrganisation {
  return {
    channels: hbm.channels,
    pseudoChannels: hbm.pseudo_channels,
    sids: hbm.sids,
    bankGroups: hbm.bank_groups,
    banksPerGroup: hbm.banks_per_group,
    rowBytes: hbm.row_bytes,
    burstBytes: hbm.burst_bytes,
    interleaveBytes: hbm.interleave_bytes,
  };
}

/**
 * `hbmSchema` with its mapping checked against its organisation, and no key it sets itself
 * (`HBM_NODE_KEYS`) under its `params`, where the topology's value would silently replace it.
 */
const checkedHbmSchema = hbmSchema.superRefine((hbm, context) => {
  for (const key of HBM_NODE_KEYS) {
    if (Object.hasOwn(hbm.params, key)) {
      context.addIssue({
        code: "custom",
        path: ["params", key],
        message: `cube.hbm sets ${key} for every HBM controller, over its params; write it as cube.hbm.${key} instead.`,
      });
    }
  }
  try {
    hbmAddressMap(hbmOrganisationOf(hbm), hbm.mapping);
  } catch (error) {
    context.addIssue({
      code: "custom",
      path: ["mapping"],
      message: isKbError(error) ? error.detail : String(error),
    });
  }
});

/** A cube: an HBM stack whose base die holds compute. */
export const cubeSchema = z
  .strictObject({
    m_cpu: componentSchema("m_cpu", "m_cpu_v1").prefault({}),
    m_cpu_dma: componentSchema("m_cpu_dma", "m_cpu_dma_v1")
      .extend({
        forward_ns: nanoseconds(
          "Overhead in ns for traffic the M_CPU.DMA forwards (IO_CPU <-> HBM); assumption.",
        ).default(20),
      })
      .superRefine(ownHopKey("cube.m_cpu_dma", "m_cpu_dma", "forward_ns"))
      .prefault({}),
    hbm: checkedHbmSchema.prefault({}),
    xbar: transitSchema("xbar")
      .superRefine(ownHopKey("cube.xbar", "xbar", "first_flit_ns"))
      .prefault({})
      .describe("Each of the two XBAR halves."),
    bridge: transitSchema("bridge")
      .extend({ link: link(512, 1).describe("The bridge's link to each XBAR half.") })
      .superRefine(ownHopKey("cube.bridge", "bridge", "first_flit_ns"))
      .prefault({}),
    noc: transitSchema("noc_router", "port_hop_v1")
      .extend({
        rows: count("Rows of the PE layout grid (one NOC router per grid position).").default(2),
        cols: count("Columns of the PE layout grid; PEs per cube = rows x cols.").default(4),
        link: link(128, 1).describe("Link between neighbouring routers."),
        routing: z
          .enum(NOC_ROUTINGS)
          .default("xy")
          .describe(
            "How packets cross the mesh: xy (the default: along the row first, then the column; dimension-order routing, deadlock-free, what BookSim 2's reference and most meshes use, checked against it by bench:noc), yx (column first) or shortest (least latency, ties by node id: the routes before xy became the default). The route's entry and exit routers are the best route's either way.",
          ),
      })
      .superRefine(ownHopKey("cube.noc", "noc_router", "first_flit_ns"))
      .prefault({}),
    sram: componentSchema("sram", "sram_v1")
      .extend({
        capacity_bytes: z
          .number()
          .int()
          .min(0)
          .default(8 * 2 ** 20)
          .describe("Shared SRAM capacity in bytes."),
        bw_gbs: gigabytesPerSecond("Shared SRAM bandwidth in GB/s.").default(256),
        latency_ns: nanoseconds("Shared SRAM access latency in ns.").default(5),
      })
      .prefault({}),
    ucie_port: transitSchema("ucie_port")
      .superRefine(ownHopKey("cube.ucie_port", "ucie_port", "first_flit_ns"))
      .prefault({})
      .describe("Each UCIe port of the cube."),
    links: z
      .strictObject({
        pe_dma_to_xbar: link(128, 2).describe("Each PE_DMA <-> its XBAR half."),
        xbar_to_hbm: link(64, 1).describe("Each XBAR half <-> each HBM channel of its half."),
        pe_to_noc: link(64, 0.5).describe("PE_DMA and PE_CPU <-> the NOC router at the PE's grid position."),
        m_cpu_to_noc: link(64, 1).describe("M_CPU <-> NOC router r0c0."),
        m_cpu_dma_to_xbar: link(128, 2).describe("M_CPU.DMA <-> XBAR half 0."),
        sram_to_noc: link(256, 1).describe("Shared SRAM <-> NOC router r0c0."),
        ucie_to_noc: link(256, 1).describe("Each UCIe port <-> its NOC corner router."),
        noc_to_xbar: link(128, 1).describe(
          "NOC router r0c0 <-> XBAR half 0: the NOC's one way into the HBM path (remote HBM traffic arriving over UCIe, M_CPU, SRAM). One attachment only, so no route can cross the XBAR from one NOC router to another.",
        ),
      })
      .prefault({}),
  })
  .describe("What every cube is made of.");

/** A SIP: one package with its IO_CPU, host link and cubes. */
export const sipSchema = z
  .strictObject({
    io_cpu: componentSchema("io_cpu", "io_cpu_v1")
      .extend({
        forward_ns: nanoseconds(
          "Overhead in ns for traffic the IO_CPU forwards (host <-> cube, SIP <-> SIP); assumption.",
        ).default(50),
      })
      .superRefine(ownHopKey("sip.io_cpu", "io_cpu", "forward_ns"))
      .prefault({}),
    host_link: link(64, 0).describe("Host <-> IO_CPU (PCIe-class link)."),
    io_link: link(128, 5).describe("IO_CPU <-> each cube's M_CPU and M_CPU.DMA."),
    cubes: count("Cubes per SIP.").default(1),
    ucie: patternLinkSchema("ring", "cube")
      .prefault({ bw_gbs: 256, length_mm: 2 })
      .describe("Inter-cube UCIe links (between the cubes' UCIe ports)."),
  })
  .describe("What every SIP is made of.");

/** A per-instance change: nodes whose id matches `match` get `impl` and/or `params` (merged). */
export const overrideSchema = z
  .strictObject({
    match: z
      .string()
      .min(1)
      .describe(
        'A node id or glob: "sip0.cube1.pe3.pe_gemm", "sip*.cube0.pe*.pe_dma" (* stays within one id segment).',
      ),
    impl: z.string().min(1).optional().describe("Implementation for the matched nodes."),
    params: z
      .record(z.string(), z.unknown())
      .optional()
      .describe("Parameters merged over the matched nodes' params."),
  })
  .describe("A heterogeneous design point: change matched nodes.");

/** `energy:` of a topology: the node logic is scaled to, and costs replacing the tables' values. */
export const energySchema = z
  .strictObject({
    process_nm: z
      .number()
      .positive()
      .max(1000)
      .default(7)
      .describe(
        "Process node of the logic, nm: the built-in logic and wire costs, stated at 45 nm, are scaled by (process_nm / 45) x (vdd_v / 0.9)^2 (docs/energy.md). Default 7 (assumption).",
      ),
    vdd_v: z
      .number()
      .positive()
      .max(5)
      .default(0.75)
      .describe("Core supply of the logic, V (default 0.75, assumption)."),
    costs: z
      .record(
        z.string().regex(/^[a-z][a-z0-9_:@/.-]*$/, "a component kind, an impl, links or wires"),
        z.record(
          z
            .string()
            .regex(
              /^[a-z][a-z0-9_]*_(pj|pj_per_bit|mw)$/,
              "a cost name ends with its unit: _pj, _pj_per_bit or _mw",
            ),
          z.number().min(0).max(1e12),
        ),
      )
      .default({})
      .describe(
        "Costs replacing the tables' values, not scaled: <kind | impl | links | wires> -> <cost> -> value in the unit its name ends with (hbm_ctrl_v2: { act_pj: 700 }, pe_gemm: { mac_f16_pj: 0.2 }, links: { ucie_pj_per_bit: 0.3 }). `kb components list` shows each table; a cost the table lacks is an error when the run starts.",
      ),
  })
  .describe(
    "Energy: the process node the logic is scaled to, and costs that replace the built-in tables' (docs/energy.md).",
  );

/** A whole topology file. */
export const topologySchema = z
  .strictObject({
    $schema: z.string().optional().describe("Path of the JSON Schema, for editors."),
    name: z.string().min(1).describe("Name of the design point."),
    description: z.string().optional(),
    plugins: z
      .array(z.string().min(1))
      .default([])
      .describe(
        "Plug-ins whose component impls this topology may use: npm package names, or paths (./my-hbm, ./my-hbm.ts, a package directory) relative to this file.",
      ),
    wire_delay_ns_per_mm: z
      .number()
      .min(0)
      .max(PHYSICAL_LIMITS.maxNsPerMm)
      .default(0.01)
      .describe(
        "Wire delay in ns per mm for links given by length (default: 10 ps/mm, a repeated on-die wire; assumption). At most 1000.",
      ),
    system: z
      .strictObject({
        sips: count("Number of SIPs (packages); in distributed runs rank = SIP.").default(1),
        sip_link: patternLinkSchema("all_to_all", "SIP")
          .prefault({ bw_gbs: 100, latency_ns: 500 })
          .describe("Inter-SIP links (between the SIPs' IO_CPUs)."),
      })
      .prefault({}),
    sip: sipSchema.prefault({}),
    cube: cubeSchema.prefault({}),
    pe_template: peTemplateSchema.prefault({}),
    overrides: z.array(overrideSchema).default([]),
    energy: energySchema.prefault({}),
  })
  // The structural limits (device address fields, graph size), before anything is expanded.
  .superRefine((topology, context) => {
    for (const { path, message } of topologyLimitIssues(topology)) {
      context.addIssue({ code: "custom", path: [...path], message, input: undefined });
    }
  })
  .describe("A kernbench-ts accelerator topology.");

/** A link as written (input). */
export type LinkSpec = z.output<typeof linkSchema>;
/** A component as resolved (defaults filled in). */
export type ComponentSpec = z.output<ReturnType<typeof componentSchema>>;
/** A topology with every default filled in. */
export type Topology = z.output<typeof topologySchema>;
/** A topology as a user may write it (most keys optional). */
export type TopologyInput = z.input<typeof topologySchema>;
