import type { HopPacket } from "@kb/components";

// The buffers of the VC router (vc-router.ts): the packets in an input VC, flit by flit, and the
// state of the VC's pipeline.

/** A packet in a VC buffer. */
export interface Held {
  /** The framework's packet, from its head's arrival on (null while only announced). */
  view: HopPacket | null;
  readonly flits: number;
  out: number;
  /**
   * The tick each flit known so far left the upstream VC router (shifted by `offset` to its
   * arrival here), or, from another feeder, the tick it arrives (offset 0).
   */
  readonly at: number[];
  /** Ticks from leaving upstream to arriving here (NaN until the head arrived). */
  offset: number;
  /** Flits that crossed this router's switch. */
  sent: number;
  /** When its head arrived, ns. */
  arrivedNs: number;
  /** The tick its head left this router (-1 before). */
  headTick: number;
  /** The packet's record at the next VC router, while its flits are handed over. */
  next: Held | null;
  /** The input port and VC it is in. */
  readonly port: number;
  readonly vc: number;
  /** Its next node is the end of its path, a sink (only its tail counts there): it crosses flit by flit. */
  toSink: boolean;
}

export function newHeld(
  view: HopPacket | null,
  flits: number,
  port: number,
  vc: number,
  offset: number,
): Held {
  return {
    view,
    flits,
    out: 0,
    at: [],
    offset,
    sent: 0,
    arrivedNs: 0,
    headTick: -1,
    next: null,
    port,
    vc,
    toSink: false,
  };
}

export const IDLE = 0; // waiting for a head to route
export const VA = 1; // routed, asking for an output VC
export const SA = 2; // holding an output VC, asking for the switch flit by flit

/** One virtual channel of an input port. */
export class InputVc {
  readonly queue: Held[] = [];
  state = IDLE;
  /** The first tick the current stage may run. */
  eligible = 0;
  outVc = -1;

  /** The front flit is in the buffer at `tick` and may cross (state SA). */
  flitReady(tick: number): boolean {
    if (this.state !== SA || this.eligible > tick) return false;
    const packet = this.queue[0] as Held;
    const arrived = packet.at[packet.sent];
    return arrived !== undefined && arrived + packet.offset <= tick;
  }
}
