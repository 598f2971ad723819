import { simdNs } from "@kb/builtins";
import type { Simulator } from "@kb/runtime";
import { DTYPE_BYTES } from "@kb/tensor";
import type { CollectiveDtype } from "./kernel-support.js";

/**
 * The PE term of the collective cost models: what the PE of a rank spends on one piece (one IPCQ
 * slot of `c` bytes) of a collective, ns, each command one after the other as the kernels issue
 * them (packages/ccl/README.md, "The PE term"; docs/latency-model.md section 7c). Every byte a PE
 * moves goes through its PE_TCM (ADR-0021 D5): a load's fill writes it, an add fetches its two
 * operands and stores its result, a store's drain reads it.
 */
export interface PieceWork {
  /** `tl.load` of a piece from the rank's own HBM: dispatch + DMA + the fill's PE_TCM write. */
  readonly loadNs: number;
  /** `tl.store` of a piece to the rank's own HBM: dispatch + the drain's PE_TCM read + DMA. */
  readonly storeNs: number;
  /** `tl.add` (max, min) of two pieces: dispatch + fetch (2c) + PE_MATH + store (c). */
  readonly combineNs: number;
  /** `tl.recv` of a piece copied out of its slot: dispatch + the slot read. */
  readonly recvNs: number;
  /** `tl.send` of a piece: the dispatch (the PE_DMA moves it while the kernel goes on). */
  readonly sendNs: number;
}

/** No PE work: the models are then the per-hop alpha-beta models they always were. */
export const NO_PE_WORK: PieceWork = Object.freeze({
  loadNs: 0,
  storeNs: 0,
  combineNs: 0,
  recvNs: 0,
  sendNs: 0,
});

/** The PE parameters the PE term reads, from the resolved topology of a machine. */
export interface PeParams {
  /** pe_cpu `dispatch_ns`. */
  readonly dispatchNs: number;
  /** pe_tcm `latency_ns` and `bw_gbs`: one PE_TCM access of B bytes is `latency + B / bw`. */
  readonly tcmLatencyNs: number;
  readonly tcmBwGbs: number;
  /** pe_fetch_store `overhead_ns`, per fetch and per store. */
  readonly fetchStoreOverheadNs: number;
  /** pe_cpu `ipcq_slot_read_ns` and `ipcq_read_gbs`. */
  readonly slotReadNs: number;
  readonly slotReadGbs: number;
  /**
   * The local DMA's lower bound besides its PE_TCM access: pe_mmu `hit_ns` + pe_dma `setup_ns` +
   * the HBM's `access_latency_ns`, and the PE's XBAR port (`cube.links.pe_dma_to_xbar.bw_gbs`).
   */
  readonly dmaFixedNs: number;
  readonly dmaBwGbs: number;
  /** PE_MATH time of an elementwise add of `elements` (pe_math_v1's `simdNs`). */
  readonly addNs: (elements: number) => number;
}

/**
 * One PE_TCM access of `bytes`: `latency_ns + bytes / bw_gbs` (pe_tcm_v1; 1 + 16384 / 512 = 33 ns
 * for a 16 KiB piece on the schema's PE).
 */
export function tcmAccessNs(pe: PeParams, bytes: number): number {
  return pe.tcmLatencyNs + bytes / pe.tcmBwGbs;
}

/**
 * The PE term of a piece of `bytes` of `dtype` for a PE with parameters `pe`:
 *
 * - load = dispatch + dma + tcm(c) (the fill), store = dispatch + tcm(c) (the drain) + dma, with
 *   dma = TLB hit + setup + HBM access + c / XBAR port (a lower bound: wires and first flits left out);
 * - combine = dispatch + fetch (overhead + tcm(2c)) + add + store (overhead + tcm(c));
 * - recv = dispatch + slot read + c / ipcq_read_gbs; send = dispatch.
 */
export function pieceWork(pe: PeParams, bytes: number, dtype: CollectiveDtype): PieceWork {
  const dma = pe.dmaFixedNs + bytes / pe.dmaBwGbs;
  const tcm = tcmAccessNs(pe, bytes);
  const d = pe.dispatchNs;
  const fetch = pe.fetchStoreOverheadNs + tcmAccessNs(pe, 2 * bytes);
  const store = pe.fetchStoreOverheadNs + tcm;
  return {
    loadNs: d + dma + tcm,
    storeNs: d + tcm + dma,
    combineNs: d + fetch + pe.addNs(bytes / DTYPE_BYTES[dtype]) + store,
    recvNs: d + pe.slotReadNs + bytes / pe.slotReadGbs,
    sendNs: d,
  };
}

/**
 * The {@link PeParams} of PE `pe` (`sip0.cube0.pe0`) of `sim`'s machine: its components' resolved
 * params and its cube's HBM and XBAR link, as the simulation uses them (no second copy).
 */
export function peParamsOf(sim: Simulator, pe: string): PeParams {
  const machine = sim.machine;
  const params = (component: string) =>
    machine.component(`${pe}.${component}`).params as Record<string, unknown>;
  const cpu = params("pe_cpu");
  const tcm = params("pe_tcm");
  const math = params("pe_math") as Parameters<typeof simdNs>[0];
  const { cube } = machine.graph.topology;
  return {
    dispatchNs: Number(cpu.dispatch_ns),
    tcmLatencyNs: Number(tcm.latency_ns),
    tcmBwGbs: Number(tcm.bw_gbs),
    fetchStoreOverheadNs: Number(params("pe_fetch_store").overhead_ns),
    slotReadNs: Number(cpu.ipcq_slot_read_ns),
    slotReadGbs: Number(cpu.ipcq_read_gbs),
    dmaFixedNs:
      Number(params("pe_mmu").hit_ns) + Number(params("pe_dma").setup_ns) + cube.hbm.access_latency_ns,
    dmaBwGbs: cube.links.pe_dma_to_xbar.bw_gbs,
    addNs: (elements) => simdNs(math, "add", elements, 0),
  };
}
