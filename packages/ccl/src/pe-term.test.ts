import { readFileSync } from "node:fs";
import { Simulator } from "@kb/runtime";
import { parseTopology, type Topology } from "@kb/topology";
import { describe, expect, it } from "vitest";
import { peParamsOf, pieceWork, tcmAccessNs } from "./pe-term.js";

// The PE term of the collective models (docs/latency-model.md section 7c), by hand on ref-4sip.yaml,
// whose PEs keep the schema's defaults: dispatch 2 ns, PE_TCM 1 ns + B / 512 GB/s, fetch / store
// overhead 0, slot read 2 ns + B / 512 GB/s, PE_MMU hit 1 ns, PE_DMA setup 0, HBM access 40 ns,
// the PE's XBAR port 128 GB/s, PE_MATH 64 lanes at 1 GHz with 4 cycles of overhead.

const REF_4SIP = new URL("../../../topologies/ref-4sip.yaml", import.meta.url);
const ref4sip = (): Topology => parseTopology(readFileSync(REF_4SIP, "utf8"), REF_4SIP.pathname);
const PIECE = 16384;
// One machine of 256 PEs for the first two tests (building it takes a second or two under load).
const shipped = Simulator.fromTopology(ref4sip());
// Building a 256-PE machine takes seconds on a loaded machine: above vitest's 5 s default.
const BUILD_TIMEOUT_MS = 60_000;

describe("the PE's work on one piece", () => {
  it(
    "reads the PE's parameters off the resolved topology",
    async () => {
      const pe = peParamsOf(await shipped, "sip1.cube0.pe0");
      expect(pe).toMatchObject({
        dispatchNs: 2,
        tcmLatencyNs: 1,
        tcmBwGbs: 512,
        fetchStoreOverheadNs: 0,
        slotReadNs: 2,
        slotReadGbs: 512,
        dmaFixedNs: 1 + 0 + 40,
        dmaBwGbs: 128,
      });
      // 4096 f32: 64 vectors of 64 lanes, 1 cycle each, + 4 cycles.
      expect(pe.addNs(4096)).toBe(68);
      expect(tcmAccessNs(pe, PIECE)).toBe(1 + 32);
    },
    BUILD_TIMEOUT_MS,
  );

  it(
    "charges a 16 KiB f32 piece its fill, fetch, store and drain on PE_TCM",
    async () => {
      const pe = peParamsOf(await shipped, "sip0.cube0.pe0");
      expect(pieceWork(pe, PIECE, "f32")).toEqual({
        // dispatch 2 + DMA (1 + 0 + 40 + 16384 / 128 = 169) + fill 1 + 16384 / 512 = 33.
        loadNs: 2 + 169 + 33,
        // dispatch 2 + drain 33 + DMA 169.
        storeNs: 2 + 33 + 169,
        // dispatch 2 + fetch of both operands 1 + 32768 / 512 = 65 + add 68 + store 33.
        combineNs: 2 + 65 + 68 + 33,
        // dispatch 2 + slot read 2 + 16384 / 512.
        recvNs: 2 + 2 + 32,
        sendNs: 2,
      });
      // bf16: the same bytes are 8192 elements, 128 vectors: the add takes 132 ns.
      expect(pieceWork(pe, PIECE, "bf16").combineNs).toBe(2 + 65 + 132 + 33);
    },
    BUILD_TIMEOUT_MS,
  );

  it(
    "follows the topology's PE_TCM and PE_FETCH_STORE parameters",
    async () => {
      const topology = ref4sip();
      const components = topology.pe_template.components;
      const slowTcm: Topology = {
        ...topology,
        pe_template: {
          ...topology.pe_template,
          components: {
            ...components,
            pe_tcm: {
              ...components.pe_tcm,
              params: { ...components.pe_tcm?.params, bw_gbs: 256, latency_ns: 3 },
            },
            pe_fetch_store: { ...components.pe_fetch_store, params: { overhead_ns: 5 } },
          },
        },
      } as Topology;
      const pe = peParamsOf(await Simulator.fromTopology(slowTcm), "sip0.cube0.pe0");
      const work = pieceWork(pe, PIECE, "f32");
      // Fill and drain 3 + 16384 / 256 = 67; fetch 5 + 3 + 128 = 136, store 5 + 67 = 72.
      expect(work.loadNs).toBe(2 + 169 + 67);
      expect(work.storeNs).toBe(2 + 67 + 169);
      expect(work.combineNs).toBe(2 + 136 + 68 + 72);
    },
    BUILD_TIMEOUT_MS,
  );
});
