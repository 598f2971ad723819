// The mesh of `pnpm bench:noc`: BookSim 2's reference network mapped onto a kernbench topology
// (../shared/fidelity/noc/README.md, "Mapping onto a kernbench topology").
import { expandTopology, resolveTopology, type TopologyGraph } from "@kb/topology";

/** BookSim's flit (16 B) and cycle (1 ns): every channel moves 16 GB/s. */
export const FLIT_BYTES = 16;
export const CYCLE_NS = 1;
/** BookSim's reference router: 2 virtual channels (`num_vcs`) of 8 flits (`vc_buf_size`, port_hop_v1's default). */
export const BOOKSIM_VCS = 2;

/** A config's routing name as `cube.noc.routing`. */
const ROUTINGS: Readonly<Record<string, string>> = { "dor-xy": "xy", "dor-yx": "yx", shortest: "shortest" };

/** A mesh size of a config, `"RxC"`: rows and columns of routers. */
export interface MeshSize {
  readonly rows: number;
  readonly cols: number;
}

/** Parses `"8x8"` (rows x columns); undefined when it is not two positive integers. */
export function parseMesh(text: string): MeshSize | undefined {
  const match = /^(\d+)x(\d+)$/.exec(text);
  if (match === null) return undefined;
  const rows = Number(match[1]);
  const cols = Number(match[2]);
  return rows >= 1 && cols >= 1 ? { rows, cols } : undefined;
}

/** How the routers are modelled: the topology's `cube.noc` keys a run may set. */
export interface RouterChoice {
  /** `cube.noc.impl` (default: `port_hop_v1` with 16 B flits at 1 ns and BookSim's 2 virtual channels). */
  readonly impl?: string;
  /** `cube.noc.params` (with the default impl: over its 16 B flits at 1 ns and `vcs: 2`, e.g. `{ vcs: 0 }` for the topologies' default router). */
  readonly params?: Readonly<Record<string, unknown>>;
  /** A config's routing (`"dor-xy"`, `"dor-yx"`, `"shortest"`). */
  readonly routing?: string;
}

/**
 * One cube whose NOC is a `rows` x `cols` mesh of BookSim's reference routers: every channel
 * (router to router, PE_DMA to router and back) 16 GB/s with 1 ns of latency, each router 4 ns of
 * pipeline (`first_flit_ns`), one flit per cycle per port, BookSim's 2 virtual channels of 8 flits
 * (`port_hop_v1` with `vcs: 2` unless the run names other params or another impl). The PE at row y, column x is BookSim's node x + cols·y; its PE_DMA
 * is the traffic endpoint. The XBAR is made too slow to be a shortcut (100 us per packet), so
 * every packet stays on the mesh.
 */
export function meshTopology(size: MeshSize, router: RouterChoice = {}): TopologyGraph {
  const link = { bw_gbs: FLIT_BYTES / CYCLE_NS, latency_ns: CYCLE_NS };
  return expandTopology(
    resolveTopology({
      name: `booksim-mesh-${size.rows}x${size.cols}`,
      system: { sips: 1 },
      sip: { cubes: 1 },
      cube: {
        noc: {
          rows: size.rows,
          cols: size.cols,
          link,
          first_flit_ns: 4 * CYCLE_NS,
          routing: ROUTINGS[router.routing ?? "dor-xy"] ?? "xy",
          impl: router.impl ?? "port_hop_v1",
          params:
            router.impl === undefined
              ? { flit_bytes: FLIT_BYTES, cycle_ns: CYCLE_NS, vcs: BOOKSIM_VCS, ...router.params }
              : (router.params ?? {}),
        },
        xbar: { first_flit_ns: 100_000 },
        links: { pe_to_noc: link },
      },
    }),
  );
}

/** The endpoint of BookSim node `id` (x + cols·y): the PE_DMA of PE `id`. */
export function endpointsOf(size: MeshSize): string[] {
  return Array.from({ length: size.rows * size.cols }, (_, id) => `sip0.cube0.pe${id}.pe_dma`);
}
