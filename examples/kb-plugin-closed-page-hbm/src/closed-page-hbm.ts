import {
  defineMemoryModel,
  type HbmAddressMap,
  hbmTopologyParams,
  type MemoryModel,
  type MemoryModelContext,
  type MemoryRequest,
  type MemoryTiming,
} from "@kb/spec";
import * as z from "zod";

const ns = (description: string, value: number) => z.number().min(0).default(value).describe(description);

/**
 * Params of `closed_page_hbm`: the stack's geometry as the topology gives it (`cube.hbm`:
 * channels, pseudo-channels, banks, row and burst sizes, `pc_bw_gbs`) plus the DRAM timings.
 * Defaults are round HBM3-class values (assumptions, not a part's datasheet).
 */
export const closedPageHbmParams = hbmTopologyParams.extend({
  t_rcd_ns: ns("ACTIVATE to READ/WRITE (row to column delay), ns.", 14),
  t_cl_ns: ns("READ/WRITE command to its first data (CAS latency; writes use it too), ns.", 14),
  t_ras_ns: ns("ACTIVATE to PRECHARGE at the earliest (row active time), ns.", 33),
  t_rp_ns: ns("PRECHARGE to the next ACTIVATE of the bank, ns.", 14),
  t_wr_ns: ns("End of write data to PRECHARGE (write recovery), ns.", 16),
  t_refi_ns: ns(
    "Each bank is refreshed once every t_refi_ns (staggered over the banks of a pseudo-channel), ns.",
    3900,
  ),
  t_rfc_pb_ns: ns("A per-bank refresh keeps its bank unavailable this long, ns.", 160),
});

/** `closed_page_hbm` params with defaults filled in. */
export type ClosedPageHbmParams = z.output<typeof closedPageHbmParams>;

/**
 * One activation: the bursts of a request that fall in one bank and row, in request order.
 * Exported for tests.
 */
export interface RowAccess {
  /** The bank within its pseudo-channel: `(sid x bank_groups + bank_group) x banks_per_group + bank`. */
  readonly bank: number;
  readonly row: number;
  /** Column accesses (bursts of `burst_bytes`). */
  readonly bursts: number;
}

/**
 * The row accesses of a request: its address ranges walked burst by burst
 * (`map.locate`, with the model's `context.addressMap`), consecutive bursts in the same bank and row merged.
 */
export function rowAccesses(map: HbmAddressMap, request: MemoryRequest): RowAccess[] {
  const { bankGroups, banksPerGroup, burstBytes } = map.organisation;
  const ranges = request.ranges;
  const out: { bank: number; row: number; bursts: number }[] = [];
  for (let i = 0; i < ranges.length; i += 2) {
    const start = ranges[i] as number;
    const end = start + (ranges[i + 1] as number);
    for (let burst = Math.floor(start / burstBytes) * burstBytes; burst < end; burst += burstBytes) {
      const at = map.locate(burst);
      const bank = (at.sid * bankGroups + at.bankGroup) * banksPerGroup + at.bank;
      const last = out[out.length - 1];
      if (last !== undefined && last.bank === bank && last.row === at.row) last.bursts++;
      else out.push({ bank, row: at.row, bursts: 1 });
    }
  }
  return out;
}

/**
 * The first time >= `t` at which bank `bank` (of `banks`) is not refreshing. Bank b's refreshes
 * start at `t_refi x (j + (b + 1) / banks)`, j = 0, 1, ..., and last `t_rfc_pb`.
 */
export function afterRefresh(params: ClosedPageHbmParams, bank: number, banks: number, t: number): number {
  const period = params.t_refi_ns;
  const first = (period * (bank + 1)) / banks;
  if (t < first || params.t_rfc_pb_ns === 0) return t;
  const start = first + Math.floor((t - first) / period) * period;
  return Math.max(t, start + params.t_rfc_pb_ns);
}

/** The model of one stack: per port (pseudo-channel) a data bus, per bank its next ACTIVATE. */
function closedPage(context: MemoryModelContext, params: ClosedPageHbmParams): MemoryModel {
  const map = context.addressMap as HbmAddressMap; // an hbm_ctrl model always has one
  const banks = params.sids * params.bank_groups * params.banks_per_group;
  const nextActivate = new Float64Array(context.ports * banks);
  const busFree = new Float64Array(context.ports);
  const burstNs = params.burst_bytes / params.pc_bw_gbs;
  return {
    service(request: MemoryRequest): MemoryTiming {
      const write = request.kind === "write";
      let bus = busFree[request.port] as number;
      let startNs = Number.POSITIVE_INFINITY;
      let busyNs = 0;
      for (const { bank, bursts } of rowAccesses(map, request)) {
        const slot = request.port * banks + bank;
        const ready = Math.max(request.arrivalNs, nextActivate[slot] as number);
        const activate = afterRefresh(params, bank, banks, ready);
        const dataNs = bursts * burstNs;
        // A write's last burst cannot go out before its data has arrived.
        const earliest = write ? request.tailNs - dataNs : 0;
        const dataStart = Math.max(activate + params.t_rcd_ns + params.t_cl_ns, bus, earliest);
        bus = dataStart + dataNs;
        const precharge = Math.max(activate + params.t_ras_ns, bus + (write ? params.t_wr_ns : 0));
        nextActivate[slot] = precharge + params.t_rp_ns;
        startNs = Math.min(startNs, dataStart);
        busyNs += dataNs;
      }
      busFree[request.port] = bus;
      if (startNs === Number.POSITIVE_INFINITY) startNs = bus = request.arrivalNs;
      return { startNs, endNs: bus, busyNs };
    },
    peak: () => ({ bytesPerNs: context.ports * params.pc_bw_gbs }),
  };
}

/** The `closed_page_hbm` impl of kind `hbm_ctrl`; in a topology: `"kb-plugin-closed-page-hbm:closed_page_hbm"`. */
export const closedPageHbm = defineMemoryModel({
  kind: "hbm_ctrl",
  impl: "closed_page_hbm",
  description:
    "HBM stack, closed-page: every access to a bank activates its row, reads or writes its bursts and precharges (data at activate + t_rcd + t_cl on the pseudo-channel's bus, burst_bytes / pc_bw_gbs a burst; next activate of the bank at max(activate + t_ras, data end [+ t_wr]) + t_rp); each bank refreshed for t_rfc_pb every t_refi, staggered over the banks.",
  params: closedPageHbmParams,
  create: closedPage,
});
