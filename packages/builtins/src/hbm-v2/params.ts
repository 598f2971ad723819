import { hbmTopologyParams } from "@kb/spec";
import * as z from "zod";
import { namedPolicies } from "./policies/index.js";
import type { HbmPolicies } from "./policies/policy.js";
import { DEFAULT_ROW_HIT_CAP } from "./policies/scheduler-fr-fcfs-cap.js";
import { HBM_PRESETS, type HbmPresetName, type HbmTiming } from "./presets.js";

const ns = (description: string) =>
  z.number().min(0).optional().describe(`${description} ns; default: the preset's.`);

/** Timing overrides: param name -> key of {@link HbmTiming}. */
export const TIMING_PARAMS = {
  t_bl_ns: "tBL",
  t_cl_ns: "tCL",
  t_cwl_ns: "tCWL",
  t_rcd_rd_ns: "tRCD_RD",
  t_rcd_wr_ns: "tRCD_WR",
  t_rp_ns: "tRP",
  t_ras_ns: "tRAS",
  t_rc_ns: "tRC",
  t_wr_ns: "tWR",
  t_rtp_ns: "tRTP",
  t_ccd_s_ns: "tCCD_S",
  t_ccd_l_ns: "tCCD_L",
  t_ccd_r_ns: "tCCD_R",
  t_rrd_s_ns: "tRRD_S",
  t_rrd_l_ns: "tRRD_L",
  t_faw_ns: "tFAW",
  t_wtr_s_ns: "tWTR_S",
  t_wtr_l_ns: "tWTR_L",
  t_rtw_ns: "tRTW",
  t_rfc_ns: "tRFC",
  t_refi_ns: "tREFI",
  t_rfc_pb_ns: "tRFCpb",
  t_refi_pb_ns: "tREFIpb",
  t_rrefd_ns: "tRREFD",
  act_cmd_ns: "actCmd",
  pre_cmd_ns: "preCmd",
  col_cmd_ns: "colCmd",
  frontend_ns: "frontend",
} as const satisfies Record<string, keyof HbmTiming>;

/** The params of `hbm_ctrl_v2`: the topology's HBM params plus the controller's knobs. */
export const hbmCtrlV2Params = hbmTopologyParams.extend({
  read_queue: z
    .number()
    .int()
    .min(1)
    .default(32)
    .describe(
      "Read queue entries per channel (queue_scope channel) or per pseudo-channel, counted in bursts (Ramulator read_buffer_size).",
    ),
  write_queue: z
    .number()
    .int()
    .min(1)
    .default(32)
    .describe(
      "Write queue entries per channel (queue_scope channel) or per pseudo-channel, counted in bursts (Ramulator write_buffer_size).",
    ),
  queue_scope: z
    .enum(["channel", "pseudo_channel"])
    .default("pseudo_channel")
    .describe(
      "pseudo_channel: each pseudo-channel has its own read and write queues and write-drain decision; channel (Ramulator 2.1: one controller per channel, as the benches/perf/hbm configurations): they are shared by the channel's pseudo-channels.",
    ),
  command_bus: z
    .enum(["channel", "pseudo_channel"])
    .default("pseudo_channel")
    .describe(
      "pseudo_channel: each pseudo-channel has its own row and column command buses; channel (Ramulator 2.1: one controller per channel): the channel's pseudo-channels share one row command lane (a slot per controller tick, the PRE's length: half a CK on HBM3, one CK on HBM2; an ACT holds act_cmd_ns of slots) and one column command lane (one RD or WR per CK): benches/perf/hbm/README.md.",
    ),
  write_high: z
    .number()
    .min(0)
    .max(1)
    .default(0.8)
    .describe("Write drain starts when the write queue is above this fraction full (or no read waits)."),
  write_low: z
    .number()
    .min(0)
    .max(1)
    .default(0.2)
    .describe("Write drain stops when the write queue is below this fraction full and a read waits."),
  refresh: z
    .enum(["all_bank", "per_bank", "none"])
    .default("all_bank")
    .describe(
      "Refresh: all_bank (REFab every tREFI, every pseudo-channel at the same times k x tREFI, tRFC each), per_bank (REFpb one bank every tREFIpb, tRFCpb), none.",
    ),
  page_policy: z
    .enum(["open", "closed", "adaptive"])
    .default("open")
    .describe(
      "open: rows stay open until a conflict or refresh; closed: auto-precharge after each run of bursts; adaptive (gem5 close_adaptive): auto-precharge after a run unless a queued request hits the row.",
    ),
  scheduler: z
    .enum(["fr_fcfs", "fcfs", "fr_fcfs_cap"])
    .default("fr_fcfs")
    .describe(
      "fr_fcfs: the earliest command first, row hits before row commands at equal times, then the oldest; fcfs: only the oldest request of each queue issues, in order; fr_fcfs_cap: fr_fcfs until scheduler_cap bursts of younger row hits went ahead of an older request to another row of their bank, which then goes first.",
    ),
  scheduler_cap: z
    .number()
    .int()
    .min(1)
    .default(DEFAULT_ROW_HIT_CAP)
    .describe(
      "fr_fcfs_cap: bursts of younger row hits that may go ahead of an older request to another row of their bank (Ramulator 1 FRFCFS_Cap's cap: 16).",
    ),
  max_pending: z
    .number()
    .int()
    .min(1)
    .optional()
    .describe(
      "Requests a pseudo-channel holds unanswered before its inbox stops (back-pressure); default (read_queue + write_queue) / 2, both queues full of 64 B lines.",
    ),
  decision_horizon_ns: z
    .number()
    .min(0)
    .optional()
    .describe(
      "Commands due within this many ns of a wake-up are decided together (a command pipeline): a request arriving meanwhile cannot take a slot inside that window. Up to frontend_ns this changes nothing; larger is faster to simulate. Default 4 tCK.",
    ),
  closed_form: z
    .enum(["run", "horizon", "burst", "request", "batch"])
    .default("horizon")
    .describe(
      "Bursts issued in one decision: horizon (the default: only those due within decision_horizon_ns, exactly the schedule of burst); run (the bursts of a run that no queued candidate can come between, even past decision_horizon_ns: a request arriving meanwhile waits behind them, so the figures depend on how far a run reaches); burst (every burst its own decision: the slowest, the reference for the others); request (a coarser model, the fastest: each request scheduled whole at its arrival in closed form and answered at once, columns in arrival order: no FR-FCFS reordering across requests, no write drain, no command-bus slots; docs/latency-model.md); batch (request's closed form, the requests held until the column frontier comes within decision_horizon_ns of the clock, then ordered per batch: FR-FCFS and write drain by batch, one timer per batch).",
    ),
  active_buffer: z
    .enum(["run", "burst"])
    .default("run")
    .describe(
      "What an ACT gives priority to (Ramulator's active buffer): run (every burst of the run that opened its bank goes before unstarted work, and no PRE closes the bank until the run ends); burst (Ramulator 2.1, whose requests are single 32 B bursts: only the burst whose ACT issued; the run's other bursts wait in their queue as ordinary row hits, blocked by a write drain or a waiting refresh like any other, and a PRE may close their row first).",
    ),
  act_edge: z
    .enum(["any", "rising"])
    .default("any")
    .describe(
      "When an ACT may issue under command_bus channel: any (any row slot); rising (Ramulator 2.1's HBM34Controller: on a rising CK edge only, while PRE and REF take either edge; on HBM3, whose row slot is half a CK, every second slot: an ACT due on a falling edge takes the next rising one, and a PRE ready on that falling edge still goes there). No effect where the row slot is a whole CK (HBM2).",
    ),
  col_edge: z
    .enum(["any", "rising"])
    .default("any")
    .describe(
      "When a RD or WR may issue: any (as soon as its timing allows); rising (Ramulator 2.1's HBM34Controller, which ticks at half a CK and tries column commands on rising CK edges only): at a multiple of tCK, a column command due between edges waiting for the next one (an ACT on a rising edge then reaches its RD after tRCD_RD + the 1.5 CK ACT's adjustment rounded up to a whole CK: 20 ns on hbm3, not 19.6875). No effect where every timing is whole CKs from a whole-CK start (HBM2).",
    ),
  bundle_answers: z
    .boolean()
    .default(false)
    .describe(
      "Answers of one DMA block's pseudo-channel parts leave as one response bundle once the last is answered (each part still crosses its own channel link from its own start; the shared links see one packet, as hbm_ctrl_v1's answers): fewer fabric events, and the earlier parts wait for the last (docs/latency-model.md section 2).",
    ),
  predict_bytes: z
    .number()
    .int()
    .min(0)
    .default(2048)
    .describe(
      "A request of at least this many bytes on a pseudo-channel is answered when its first data leaves, with the end its remaining bursts reach if nothing else arrives (a prediction, which costs simulation time); a smaller one when its last burst issues, so its response's head leaves no earlier than that (its tail stays exact while bytes / the slowest link back <= tCL + tBL: 880 B at 64 GB/s).",
    ),
  ...(Object.fromEntries(
    Object.entries({
      t_bl_ns: "Burst length on the data bus tBL (one burst_bytes access),",
      t_cl_ns: "CAS latency tCL (RD to data),",
      t_cwl_ns: "CAS write latency tCWL (WR to data),",
      t_rcd_rd_ns: "ACT to RD tRCD_RD,",
      t_rcd_wr_ns: "ACT to WR tRCD_WR,",
      t_rp_ns: "PRE to ACT tRP,",
      t_ras_ns: "ACT to PRE tRAS,",
      t_rc_ns: "ACT to ACT same bank tRC,",
      t_wr_ns: "Write recovery tWR (end of write data to PRE),",
      t_rtp_ns: "RD to PRE tRTP,",
      t_ccd_s_ns: "Column to column, same SID tCCD_S,",
      t_ccd_l_ns: "Column to column, same bank group tCCD_L,",
      t_ccd_r_ns: "RD to RD across SIDs tCCD_R,",
      t_rrd_s_ns: "ACT to ACT, other bank group tRRD_S,",
      t_rrd_l_ns: "ACT to ACT, same bank group tRRD_L,",
      t_faw_ns: "Four-activate window tFAW,",
      t_wtr_s_ns: "Write data end to RD, other bank group tWTR_S,",
      t_wtr_l_ns: "Write data end to RD, same bank group tWTR_L,",
      t_rtw_ns: "RD to WR turnaround tRTW,",
      t_rfc_ns: "All-bank refresh cycle tRFC,",
      t_refi_ns: "All-bank refresh interval tREFI,",
      t_rfc_pb_ns: "Per-bank refresh cycle tRFCpb,",
      t_refi_pb_ns: "Per-bank refresh interval tREFIpb,",
      t_rrefd_ns: "REFpb to REFpb / ACT of another bank tRREFD,",
      act_cmd_ns:
        "ACT length on the row command bus (constraints count from a command's last cycle, as Ramulator: ACT->RD/WR/PRE longer, PRE->ACT shorter by act - pre),",
      pre_cmd_ns: "PRE/REF length on the row command bus,",
      col_cmd_ns: "RD/WR length on the column command bus,",
      frontend_ns:
        "Fixed controller front-end latency (arrival to visible to the scheduler), calibrated to the reference's unloaded latency,",
    }).map(([key, text]) => [key, ns(text)]),
  ) as { [K in keyof typeof TIMING_PARAMS]: z.ZodOptional<z.ZodNumber> }),
  refresh_scope: z
    .enum(["pseudo_channel", "channel"])
    .default("pseudo_channel")
    .describe(
      "Whose turn an all-bank refresh waits for: pseudo_channel (each pseudo-channel refreshes on its own); channel (Ramulator 2.1's one priority buffer per channel controller, under queue_scope channel: the channel's pseudo-channels issue their PREab and REFab one after the other in PC order, each waiting for the previous one's REFab, and none picks new work until its own REFab). No effect with per_bank or no refresh.",
    ),
});

export type HbmCtrlV2Params = z.output<typeof hbmCtrlV2Params>;

/** Everything a port scheduler needs: the timing (ns), the organisation and the knobs. */
export interface HbmCtrlV2Config {
  readonly preset: HbmPresetName;
  readonly timing: HbmTiming;
  readonly sids: number;
  readonly bankGroups: number;
  readonly banksPerGroup: number;
  readonly burstBytes: number;
  readonly readQueue: number;
  readonly writeQueue: number;
  /** Whether the queues (and write drain) are shared by the pseudo-channels of a channel. */
  readonly channelQueues: boolean;
  /** Whether a channel's pseudo-channels share one command per controller clock (the PRE's length). */
  readonly channelBus: boolean;
  /** Pseudo-channels per channel (ports p of one channel: floor(p / pseudoChannels)). */
  readonly pseudoChannels: number;
  readonly writeHigh: number;
  readonly writeLow: number;
  /** The refresh policy's name (`policies.refresh.name`). */
  readonly refresh: string;
  /** Whether the page policy is `closed` (`policies.page.name`). */
  readonly closedPage: boolean;
  /** The scheduler, refresh and page policies (named by the params, or a plug-in's). */
  readonly policies: HbmPolicies;
  readonly maxPending: number;
  readonly predictBytes: number;
  /** Commands due within this window of a wake-up are committed together, ns. */
  readonly horizon: number;
  /** How far one decision issues a run's bursts (`closed_form`). */
  readonly closedForm: "run" | "horizon" | "burst" | "request" | "batch";
  /** Whether an ACT gives priority to its first burst only (`active_buffer: burst`), not its whole run. */
  readonly activeBurst: boolean;
  /**
   * `act_edge: rising`: row slots per CK (an ACT only on every such slot, a rising edge); 1 when
   * any slot will do (`any`, or a row slot of a whole CK).
   */
  readonly actEdgeSlots: number;
  /** `col_edge: rising`: RD and WR only at multiples of this (tCK), ns; 0 when any time will do (`any`). */
  readonly colEdgeNs: number;
  /** `refresh_scope: channel` (with channel queues and all-bank refresh): a PC's refresh waits for the lower PCs' REFab. */
  readonly channelRefresh: boolean;
}

/**
 * Where `hbmCtrlV2WithPolicies` puts a plug-in's policy objects on the parsed params (a symbol:
 * never a key of a topology file).
 */
export const POLICY_OVERRIDES: unique symbol = Symbol("hbm_ctrl_v2 policies");

/**
 * Resolves the params: the preset's timing (hbm3 when the topology names none), then overrides;
 * the policies the params name, then a plug-in's.
 */
export function hbmCtrlV2Config(params: HbmCtrlV2Params): HbmCtrlV2Config {
  const preset = params.preset ?? "hbm3";
  const timing: Record<string, number> = { ...HBM_PRESETS[preset].timing };
  for (const [param, key] of Object.entries(TIMING_PARAMS)) {
    const value = (params as Record<string, unknown>)[param];
    if (typeof value === "number") timing[key] = value;
  }
  const overrides = (params as { [POLICY_OVERRIDES]?: Partial<HbmPolicies> })[POLICY_OVERRIDES];
  const policies: HbmPolicies = {
    ...namedPolicies(params.scheduler, params.scheduler_cap, params.refresh, params.page_policy),
    ...overrides,
  };
  return {
    preset,
    timing: Object.freeze(timing) as unknown as HbmTiming,
    sids: params.sids,
    bankGroups: params.bank_groups,
    banksPerGroup: params.banks_per_group,
    burstBytes: params.burst_bytes,
    readQueue: params.read_queue,
    writeQueue: params.write_queue,
    channelQueues: params.queue_scope === "channel",
    channelBus: params.command_bus === "channel",
    pseudoChannels: params.pseudo_channels,
    writeHigh: params.write_high,
    writeLow: params.write_low,
    refresh: policies.refresh.name,
    closedPage: policies.page.name === "closed",
    policies,
    maxPending: params.max_pending ?? Math.max(1, Math.ceil((params.read_queue + params.write_queue) / 2)),
    predictBytes: params.predict_bytes,
    horizon: params.decision_horizon_ns ?? 4 * (timing.tCK as number),
    closedForm: params.closed_form,
    activeBurst: params.active_buffer === "burst",
    actEdgeSlots:
      params.act_edge === "rising"
        ? Math.max(1, Math.round((timing.tCK as number) / (timing.preCmd as number)))
        : 1,
    colEdgeNs: params.col_edge === "rising" ? (timing.tCK as number) : 0,
    channelRefresh:
      params.refresh_scope === "channel" &&
      params.queue_scope === "channel" &&
      params.pseudo_channels > 1 &&
      policies.refresh.name === "all_bank",
  };
}
