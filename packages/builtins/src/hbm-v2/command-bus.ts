/**
 * The command slots of one channel's controller (`command_bus: channel`): Ramulator 2.1 runs one
 * controller per channel, which issues at most one command (ACT, PRE, RD, WR, REF) per clock of
 * its own, whichever pseudo-channel it is for. A slot is `slotNs` long (the shortest command:
 * the PRE, half a CK on HBM3, one CK on HBM2); a slot is taken when its tick index is stored at
 * `tick mod SLOTS` (a ring: a booking 4096 slots old is forgotten).
 */
export class CommandBus {
  static readonly SLOTS = 4096;
  /** Tick index booked at each ring position (-1: none). Written through PortState.book (journaled). */
  readonly booked = new Float64Array(CommandBus.SLOTS).fill(-1);

  constructor(readonly slotNs: number) {}

  /** The tick a command at `time` issues in. */
  tickOf(time: number): number {
    return Math.floor(time / this.slotNs + 1e-6);
  }

  /** Whether tick `tick` is taken. */
  taken(tick: number): boolean {
    return this.booked[tick % CommandBus.SLOTS] === tick;
  }
}
