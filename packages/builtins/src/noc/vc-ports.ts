import { type Held, IDLE, InputVc, VA } from "./vc-buffer.js";

// The ports of a VC router (vc-router.ts): its input VCs, the credits and state of its outputs,
// the credits coming back, and when its next step can change anything (a router sleeps through
// the ticks in which it cannot).

/** The input VCs and output state of one VC router, and when it may sleep. */
export abstract class VcPorts {
  protected readonly vcs: number;
  /** The input VCs, VC `vc` of input `i` at `i * vcs + vc`. */
  protected readonly inputVcs: InputVc[];
  protected readonly inputCount: number;
  /** Per input, the packets queued in its VCs (inputs with none are skipped by the stages). */
  protected readonly occupied: number[];
  /** Per output and VC, the free flits of the VC router downstream. */
  protected readonly credits: number[][];
  /** The first tick each output VC may be allocated again. */
  protected readonly vcFree: number[][];
  /** The first tick each input / output is free of a packet crossing whole (towards a non-VC node). */
  protected readonly inBusy: number[];
  protected readonly outBusy: number[];
  /** Credits coming back: (tick, output, VC, flits) in a row, four numbers each (no object per flit). */
  protected readonly pending: number[] = [];
  /** State changes (stage moves, credits taken back): a step that makes none leaves the router as it was. */
  protected moves = 0;
  /** The first tick a step can change anything (no new arrival, flit or credit meanwhile). */
  protected sleepUntil = 0;

  constructor(inputs: number, outputs: number, vcs: number, bufferFlits: number) {
    this.vcs = vcs;
    const grid = (rows: number, value: number) =>
      Array.from({ length: rows }, () => new Array<number>(vcs).fill(value));
    this.inputCount = inputs;
    this.inputVcs = Array.from({ length: inputs * vcs }, () => new InputVc());
    this.occupied = new Array<number>(inputs).fill(0);
    this.credits = grid(outputs, bufferFlits);
    this.vcFree = grid(outputs, 0);
    this.inBusy = new Array<number>(inputs).fill(0);
    this.outBusy = new Array<number>(outputs).fill(0);
  }

  /** Output `out` leads to a VC router of this clock (credits count there; elsewhere they are unbounded). */
  protected abstract hasDownstream(out: number): boolean;

  /** A credit for output `port`'s VC `vc` comes back at `tick`. */
  credit(tick: number, port: number, vc: number, flits: number): void {
    this.pending.push(tick, port, vc, flits);
    if (tick < this.sleepUntil) this.sleepUntil = tick;
  }

  protected returnCredits(tick: number): void {
    let kept = 0;
    const pending = this.pending;
    for (let at = 0; at < pending.length; at += 4) {
      const port = pending[at + 1] as number;
      const vc = pending[at + 2] as number;
      const flits = pending[at + 3] as number;
      if ((pending[at] as number) > tick) {
        pending[kept] = pending[at] as number;
        pending[kept + 1] = port;
        pending[kept + 2] = vc;
        pending[kept + 3] = flits;
        kept += 4;
      } else {
        const row = this.credits[port] as number[];
        row[vc] = (row[vc] as number) + flits;
        this.moves++;
      }
    }
    pending.length = kept;
  }

  /**
   * After a step that changed nothing: the first tick at which the next one can, as far as time
   * alone goes (a pipeline stage's or a flit's tick, a credit coming back, a port or output VC
   * freed); an arrival, an announced flit or a credit sent meanwhile wakes the router earlier.
   */
  protected nextChange(tick: number): number {
    let next = Number.POSITIVE_INFINITY;
    const pending = this.pending;
    for (let at = 0; at < pending.length; at += 4) next = Math.min(next, pending[at] as number);
    const V = this.vcs;
    for (let i = 0; i < this.inputCount; i++) {
      if (this.occupied[i] === 0) continue;
      for (let r = i * V; r < i * V + V; r++) {
        const input = this.inputVcs[r] as InputVc;
        const front = input.queue[0];
        if (front === undefined || front.view === null) continue; // its head's arrival wakes it
        let at: number;
        if (input.eligible > tick) at = input.eligible;
        else if (input.state === IDLE) at = (front.at[0] as number) + front.offset;
        else if (input.state === VA) at = this.outputVcFreeAfter(front.out, tick);
        else at = this.flitChange(i, input, front, tick);
        if (at < next) next = at;
      }
    }
    return next;
  }

  /** A head waiting for VC allocation found every VC of `out` closed: when one frees (credits wake it otherwise). */
  private outputVcFreeAfter(out: number, tick: number): number {
    let next = Number.POSITIVE_INFINITY;
    for (const free of this.vcFree[out] as number[]) if (free > tick && free < next) next = free;
    return next;
  }

  /** A VC holding an output VC whose front flit did not cross: when it may. */
  private flitChange(i: number, input: InputVc, packet: Held, tick: number): number {
    const arrived = packet.at[packet.sent];
    if (arrived === undefined) return Number.POSITIVE_INFINITY; // flitSent wakes it
    if (arrived + packet.offset > tick) return arrived + packet.offset;
    const inBusy = this.inBusy[i] as number;
    if (inBusy > tick) return inBusy;
    const out = packet.out;
    if (this.hasDownstream(out)) {
      // Only a credit (pending or sent later) lets it ask.
      if (((this.credits[out] as number[])[input.outVc] as number) === 0) return Number.POSITIVE_INFINITY;
      return tick + 1;
    }
    const outBusy = this.outBusy[out] as number;
    return outBusy > tick ? outBusy : tick + 1;
  }
}
