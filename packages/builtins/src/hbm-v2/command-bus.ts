/** The row lane of a {@link CommandBus}: ACT, PRE, PREab, REF. */
export const ROW_LANE = 0;
/** The column lane of a {@link CommandBus}: RD, WR. */
export const COL_LANE = 1;

/**
 * The command slots of one channel's controller (`command_bus: channel`): Ramulator 2.1 runs one
 * controller per channel, which each clock tries one column command and one row command
 * (`HBMControllerBase::tick`: `try_issue_slot(ColumnBus)`, then `RowBus`), whichever
 * pseudo-channel they are for. So two lanes: a row slot is `rowSlotNs` long (the controller's
 * tick, the PRE's length: half a CK on HBM3, one CK on HBM2) and a column slot `colSlotNs` (one
 * CK: HBM3 issues column commands on rising edges only). A slot is taken when its tick index is
 * stored at `lane x SLOTS + tick mod SLOTS` (a ring per lane: a booking 4096 slots old is
 * forgotten).
 */
export class CommandBus {
  static readonly SLOTS = 4096;
  /** Tick index booked at each ring position (-1: none). Written through PortState.book (journaled). */
  readonly booked = new Float64Array(2 * CommandBus.SLOTS).fill(-1);
  /** Each lane's slot length, ns. */
  readonly slotNs: readonly [number, number];

  /**
   * Row slots an ACT takes (Ramulator's Channel-level bus occupancy from `command_cycles`: ACT
   * 2 CK on HBM2, 1.5 CK = 3 half-CK ticks on HBM3, against 1 tick for PRE and REF).
   */
  readonly actSlots: number;

  constructor(rowSlotNs: number, colSlotNs: number, actNs = rowSlotNs) {
    this.slotNs = [rowSlotNs, colSlotNs];
    this.actSlots = Math.max(1, Math.round(actNs / rowSlotNs));
  }

  /** The first of ticks `tick` .. `tick + n - 1` of `lane` already taken, as an offset; -1 when all are free. */
  clash(tick: number, lane: number, n: number): number {
    for (let i = 0; i < n; i++) if (this.taken(tick + i, lane)) return i;
    return -1;
  }

  /** The tick of `lane` a command at `time` issues in. */
  tickOf(time: number, lane: number): number {
    return Math.floor(time / (this.slotNs[lane] as number) + 1e-6);
  }

  /** Where tick `tick` of `lane` is stored in `booked`. */
  index(tick: number, lane: number): number {
    return lane * CommandBus.SLOTS + (tick % CommandBus.SLOTS);
  }

  /** Whether tick `tick` of `lane` is taken. */
  taken(tick: number, lane: number): boolean {
    return this.booked[this.index(tick, lane)] === tick;
  }
}
