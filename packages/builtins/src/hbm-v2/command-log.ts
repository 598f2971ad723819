import type { HbmCtrlV2Config } from "./params.js";

/** The commands a {@link HbmCommandLog} records. */
export const CMD_ACT = 0;
export const CMD_PRE = 1;
export const CMD_RD = 2;
export const CMD_WR = 3;
/** REFab: every bank of the pseudo-channel. */
export const CMD_REFAB = 4;
/** REFpb: one bank. */
export const CMD_REFPB = 5;

/** DRAMPower's name of each command code. */
const NAMES = ["ACT", "PRE", "RD", "WR", "REFA", "REFB"] as const;

/**
 * The DRAM commands one pseudo-channel of `hbm_ctrl_v2` issued, in issue order (a precharge may
 * be logged at its own later time: auto-precharge). Off unless a run asks for it
 * (`HbmCtrlV2Model.recordCommands`): the scheduler's hook is one null check per command.
 */
export class HbmCommandLog {
  /** Issue time, ns. */
  readonly time: number[] = [];
  /** Command code (`CMD_*`). */
  readonly cmd: number[] = [];
  /** Flat bank index ((sid x bank_groups + bank group) x banks_per_group + bank); -1 for REFab. */
  readonly bank: number[] = [];
  /** Row (ACT, RD, WR), else -1. */
  readonly row: number[] = [];

  record(cmd: number, time: number, bank: number, row: number): void {
    this.time.push(time);
    this.cmd.push(cmd);
    this.bank.push(bank);
    this.row.push(row);
  }

  get length(): number {
    return this.time.length;
  }
}

/**
 * The log as DRAMPower 5's command trace (its CLI's CSV: `timestamp,command,rank,bank_group,
 * bank,row,column[,data]`, the timestamp the clock of tCK in which the command ends), sorted by
 * time (stable), ending with
 * `END` at `endNs`. The pseudo-channel is one rank; bank groups are numbered across SIDs
 * (sid x bank_groups + group) and banks flat, as the memspec of {@link drampowerMemspec} has them.
 * RD and WR carry a burst of zero bytes (DRAMPower's CLI requires data; the core energy compared
 * does not depend on it).
 */
export function drampowerTrace(log: HbmCommandLog, config: HbmCtrlV2Config, endNs: number): string {
  const t = config.timing;
  const tCK = t.tCK;
  const clock = (ns: number) => Math.floor(ns / tCK + 1e-6);
  // Each command at its last cycle: Ramulator's (and the controller's) constraints run from one
  // command's last cycle to the next one's, DRAMPower's from timestamp to timestamp (an ACT 1.5
  // CK long issues tRFC - 1 CK after its REFab starts, but ends tRFC after the REFab ends).
  const length = [t.actCmd, t.preCmd, t.colCmd, t.colCmd, t.preCmd, t.preCmd];
  const order = Array.from({ length: log.length }, (_, i) => i);
  order.sort((a, b) => (log.time[a] as number) - (log.time[b] as number) || a - b);
  const data = "0".repeat(2 * config.burstBytes);
  const lines: string[] = [];
  for (const i of order) {
    const cmd = log.cmd[i] as number;
    const bank = Math.max(0, log.bank[i] as number);
    const group = Math.floor(bank / config.banksPerGroup);
    const row = Math.max(0, log.row[i] as number);
    const line = `${clock((log.time[i] as number) + (length[cmd] as number))},${NAMES[cmd]},0,${group},${bank},${row},0`;
    lines.push(cmd === CMD_RD || cmd === CMD_WR ? `${line},${data}` : line);
  }
  lines.push(`${clock(endNs)},END,0,0,0,0,0`);
  return `${lines.join("\n")}\n`;
}
