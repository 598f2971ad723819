import type { Event, ForwardingModel, ForwardingModelContext, HopPacket, ModelStat } from "@kb/components";
import { type Held, IDLE, type InputVc, newHeld, SA, VA } from "./vc-buffer.js";
import { type Fabric, fabricOf, VcClock } from "./vc-clock.js";
import { VcPorts } from "./vc-ports.js";

// `port_hop_v1` with `vcs` > 0: BookSim 2's input-queued virtual-channel router (`iq`), cycle by
// cycle (docs/latency-model.md section 4, "Virtual channels"). Each input port has `vcs` virtual
// channels of `vc_buffer_flits` flits; a packet at the front of its VC goes through route
// computation (RC), VC allocation (VA) and switch allocation (SA), one cycle each, then crosses
// the switch in the rest of `first_flit_ns`. VA and SA are separable one-iteration iSLIP
// allocators with round-robin pointers. The switch is allocated flit by flit (BookSim's
// `hold_switch_for_packet = 0`): each cycle every input moves at most one flit and every output
// takes at most one, so the flits of packets on different VCs interleave at an output. A flit
// crosses once it is in the buffer and its output VC has a credit; it takes one credit downstream
// and gives one back upstream the cycle after it left. Between VC routers of one clock the flits
// are handed over one by one (`announce`, `flitSent`; `context.send`'s paced tail keeps the links
// from serialising the packets again). Towards anything else (an endpoint, a memory, another
// model: the framework moves whole packets there) a packet crosses whole: its head is granted once
// all its flits are in the buffer in time to leave one per cycle, and it holds its input and output
// for its flits.
//
// All VC routers of a machine with the same clock share one clock (`VcClock`): it steps every
// router with work, tick by tick, in batches of `st + 1` ticks per engine event (a packet granted
// at tick k leaves at tick k + 1 + st, so a batch may run that late).

/** The knobs of the VC router (from `port_hop_v1`'s params). */
export interface VcRouterParams {
  readonly first_flit_ns: number;
  readonly cycle_ns: number;
  readonly flit_bytes: number;
  readonly vcs: number;
  readonly vc_buffer_flits: number;
}

/** Cycles of route computation, VC allocation and switch allocation (BookSim's 1-cycle stages). */
export const VC_STAGE_CYCLES = 3;

const PORT_WAIT = {
  name: "port_wait_ns",
  unit: "ns",
  description: "Time heads waited past the pipeline for a busy input or output port, summed over packets.",
} as const;

const CREDIT_STALLS = {
  name: "credit_stalls",
  unit: "count",
  description: "Times a packet found no room on an input (buffer_flits > 0), counted per try.",
} as const;

/** The counters of `port_hop_v1` (either variant). */
export const PORT_HOP_COUNTERS = [PORT_WAIT, CREDIT_STALLS] as const;

/** The state of one VC router (one topology node). */
export class VcRouter extends VcPorts implements ForwardingModel {
  private readonly buffer: number;
  private readonly cycleNs: number;
  /** Ticks from a switch grant to the flit's departure (1 + the switch traversal). */
  private readonly leaveTicks: number;
  readonly clock: VcClock;
  private readonly fabric: Fabric<VcRouter>;
  /** The VC each packet admitted on an input fed by a non-VC node will arrive in, in order. */
  private readonly expected: number[][];
  /** The packets a VC router upstream announced on each input, in the order their heads arrive. */
  private readonly announced: Held[][];
  /** Free flits of each input VC fed by a non-VC node (what `admit` grants from). */
  private readonly room: number[][];
  private readonly feeder: (VcRouter | null | undefined)[];
  /** Per input fed by a VC router, that router's output leading here (where credits go back). */
  private readonly feederOut: number[];
  /** Per output: the VC router of this clock behind it and its input index there (null: anything else). */
  private readonly downstream: (VcRouter | null | undefined)[];
  private readonly downstreamPort: number[];
  private readonly vaGrant: number[];
  private readonly vaAccept: number[];
  private readonly saGrant: number[];
  private readonly saAccept: number[];
  private readonly admitNext: number[];
  /** Per input, the VC switch allocation looks at first (round robin over its VCs). */
  private readonly vcNext: number[];
  /** Input VCs waiting for VC allocation. */
  private waitingVa = 0;
  /** Scratch of the allocators: the granted requester per output VC / output (-1 none, -2 closed). */
  private readonly vaBest: Int32Array;
  private readonly saBest: Int32Array;
  private readonly touched: number[] = [];
  private held = 0;
  private waitedNs = 0;
  private refusals = 0;

  constructor(
    private readonly context: ForwardingModelContext,
    private readonly params: VcRouterParams,
  ) {
    const inputs = Math.max(1, context.inputs.length);
    const outputs = Math.max(1, context.outputs.length);
    super(inputs, outputs, params.vcs, params.vc_buffer_flits);
    this.buffer = params.vc_buffer_flits;
    this.cycleNs = params.cycle_ns;
    const pipeline = Math.round(params.first_flit_ns / params.cycle_ns);
    const st = Math.max(0, pipeline - VC_STAGE_CYCLES);
    this.leaveTicks = 1 + st;
    this.fabric = fabricOf<VcRouter>(context.env);
    this.fabric.routers.set(context.id, this);
    const key = `${params.cycle_ns}/${st}`;
    let clock = this.fabric.clocks.get(key);
    if (clock === undefined) {
      clock = new VcClock(context.env, params.cycle_ns, st + 1);
      this.fabric.clocks.set(key, clock);
    }
    this.clock = clock;
    const grid = (rows: number, value: number) =>
      Array.from({ length: rows }, () => new Array<number>(this.vcs).fill(value));
    this.expected = Array.from({ length: inputs }, () => []);
    this.announced = Array.from({ length: inputs }, () => []);
    this.room = grid(inputs, this.buffer);
    this.feeder = new Array(inputs).fill(undefined);
    this.feederOut = new Array<number>(inputs).fill(-1);
    this.downstream = new Array(outputs).fill(undefined);
    this.downstreamPort = new Array<number>(outputs).fill(-1);
    this.vaGrant = new Array<number>(outputs * this.vcs).fill(0);
    this.vaAccept = new Array<number>(inputs * this.vcs).fill(0);
    this.saGrant = new Array<number>(outputs).fill(0);
    this.saAccept = new Array<number>(inputs).fill(0);
    this.admitNext = new Array<number>(inputs).fill(0);
    this.vcNext = new Array<number>(inputs).fill(0);
    this.vaBest = new Int32Array(outputs * this.vcs).fill(-1);
    this.saBest = new Int32Array(outputs).fill(-1);
  }

  /** The VC router of this clock feeding input `port`, or null (a source, an XBAR, another model or clock). */
  private feederOf(port: number): VcRouter | null {
    let feeder = this.feeder[port];
    if (feeder === undefined) {
      feeder = this.fabric.routers.get(this.context.inputs[port] ?? "") ?? null;
      if (feeder !== null && feeder.clock !== this.clock) feeder = null;
      this.feeder[port] = feeder;
      if (feeder !== null) this.feederOut[port] = feeder.context.outputs.indexOf(this.context.id);
    }
    return feeder;
  }

  protected hasDownstream(out: number): boolean {
    return this.downstreamOf(out) !== null;
  }

  /** The VC router of this clock behind output `port`, or null (an endpoint, another model or clock: unbounded). */
  private downstreamOf(port: number): VcRouter | null {
    let next = this.downstream[port];
    if (next === undefined) {
      next = this.fabric.routers.get(this.context.outputs[port] ?? "") ?? null;
      if (next !== null && next.clock !== this.clock) next = null;
      this.downstream[port] = next;
      if (next !== null) this.downstreamPort[port] = next.context.inputs.indexOf(this.context.id);
    }
    return next;
  }

  private tickOf(ns: number): number {
    return Math.ceil(ns / this.cycleNs - 1e-9);
  }

  admit(packet: HopPacket): boolean {
    const port = packet.inPort;
    if (port < 0 || this.feederOf(port) !== null) return true;
    const need = Math.min(packet.flits(this.params.flit_bytes), this.buffer);
    const room = this.room[port] as number[];
    const start = this.admitNext[port] as number;
    for (let i = 0; i < this.vcs; i++) {
      const vc = (start + i) % this.vcs;
      if ((room[vc] as number) >= need) {
        room[vc] = (room[vc] as number) - need;
        this.admitNext[port] = (vc + 1) % this.vcs;
        (this.expected[port] as number[]).push(vc);
        return true;
      }
    }
    this.refusals++;
    return false;
  }

  /**
   * The VC router upstream granted the head of a packet of `flits` flits to `vc` of input `port`:
   * its flits follow (`flitSent`), its head's `arrive` later, in the order of the announcements.
   */
  announce(port: number, vc: number, flits: number): Held {
    const packet = newHeld(null, flits, port, vc, Number.NaN);
    (this.inputVcs[port * this.vcs + vc] as InputVc).queue.push(packet);
    (this.announced[port] as Held[]).push(packet);
    this.occupied[port] = (this.occupied[port] as number) + 1;
    this.held++;
    this.sleepUntil = 0;
    return packet;
  }

  arrive(packet: HopPacket): undefined {
    const port = Math.max(0, packet.inPort);
    const now = this.context.env.now;
    const tick = this.tickOf(now);
    const out = Math.max(0, packet.outPort);
    let record = (this.announced[port] as Held[]).shift();
    if (record !== undefined) {
      // From a VC router of this clock: its flits' ticks are their departures there.
      record.offset = tick - (record.at[0] as number);
    } else {
      // From anything else: the flits follow the head one per cycle.
      const vc = (this.expected[port] as number[]).shift() ?? 0;
      const flits = packet.flits(this.params.flit_bytes);
      record = newHeld(null, flits, port, vc, 0);
      for (let k = 0; k < flits; k++) record.at.push(tick + k);
      (this.inputVcs[port * this.vcs + vc] as InputVc).queue.push(record);
      this.occupied[port] = (this.occupied[port] as number) + 1;
      this.held++;
    }
    record.view = packet;
    record.out = out;
    record.toSink = packet.kind === "response" && packet.to === packet.destination;
    record.arrivedNs = now;
    this.sleepUntil = 0;
    this.clock.wake(this, tick);
    return undefined;
  }

  /**
   * A flit of `packet` (announced here) left the VC router upstream at `tick`. A packet longer
   * than the VC's buffer may have crossed whole before its last flits were sent: such a flit
   * passes through, its slot given back the cycle after it arrived.
   */
  flitSent(packet: Held, tick: number): void {
    packet.at.push(tick);
    this.sleepUntil = 0;
    if (packet.sent < packet.flits) return;
    const feeder = this.feederOf(packet.port) as VcRouter;
    feeder.credit(tick + packet.offset + 1, this.feederOut[packet.port] as number, packet.vc, 1);
  }

  /** Has packets to move or room to give back. */
  busy(): boolean {
    return this.held > 0 || this.pending.length > 0;
  }

  /** One cycle: credits back, then RC, VA and SA (each stage's winners move on next cycle). */
  step(tick: number): void {
    if (tick < this.sleepUntil) return;
    const moves = this.moves;
    if (this.pending.length > 0) this.returnCredits(tick);
    if (this.held === 0) return;
    this.route(tick);
    this.allocateVcs(tick);
    this.allocateSwitch(tick);
    if (this.moves === moves) this.sleepUntil = this.nextChange(tick);
  }

  /** Room on an input fed by a non-VC node is free again (its packet's tail left): offer it. */
  private readonly roomBack = (event: Event<{ port: number; vc: number; flits: number }>): void => {
    const { port, vc, flits } = event.value;
    const row = this.room[port] as number[];
    row[vc] = (row[vc] as number) + flits;
    this.context.resume(port);
  };

  private route(tick: number): void {
    const V = this.vcs;
    for (let i = 0; i < this.inputCount; i++) {
      if (this.occupied[i] === 0) continue;
      for (let r = i * V; r < i * V + V; r++) {
        const input = this.inputVcs[r] as InputVc;
        const front = input.queue[0];
        if (input.state !== IDLE || front === undefined || front.view === null) continue;
        const at = Math.max(input.eligible, (front.at[0] as number) + front.offset);
        if (!(at <= tick)) continue;
        input.state = VA;
        input.eligible = tick + 1;
        this.waitingVa++;
        this.moves++;
      }
    }
  }

  private outputVcOpen(out: number, vc: number, tick: number): boolean {
    if (((this.vcFree[out] as number[])[vc] as number) > tick) return false;
    return this.downstreamOf(out) === null || ((this.credits[out] as number[])[vc] as number) > 0;
  }

  /** VC allocation: one iSLIP iteration over (input VC) x (output VC). */
  private allocateVcs(tick: number): void {
    if (this.waitingVa === 0) return;
    const V = this.vcs;
    const inVcs = this.inputVcs.length;
    const best = this.vaBest;
    const touched = this.touched;
    touched.length = 0;
    // Grant: each open output VC picks the requesting input VC first from its pointer.
    for (let r = 0; r < inVcs; r++) {
      const input = this.inputVcs[r] as InputVc;
      if (input.state !== VA || input.eligible > tick) continue;
      const out = (input.queue[0] as Held).out;
      for (let vc = 0; vc < V; vc++) {
        const q = out * V + vc;
        const current = best[q] as number;
        if (current === -2) continue; // closed this tick
        if (current === -1) {
          if (!this.outputVcOpen(out, vc, tick)) {
            best[q] = -2;
            touched.push(q);
            continue;
          }
          best[q] = r;
          touched.push(q);
          continue;
        }
        const pointer = this.vaGrant[q] as number;
        if ((r - pointer + inVcs) % inVcs < (current - pointer + inVcs) % inVcs) best[q] = r;
      }
    }
    // Accept: each input VC takes the granted output VC first from its own pointer.
    for (let r = 0; r < inVcs; r++) {
      const input = this.inputVcs[r] as InputVc;
      if (input.state !== VA || input.eligible > tick) continue;
      const out = (input.queue[0] as Held).out;
      const pointer = this.vaAccept[r] as number;
      let pick = -1;
      for (let k = 0; k < V && pick < 0; k++) {
        const vc = (pointer + k) % V;
        if (best[out * V + vc] === r) pick = vc;
      }
      if (pick < 0) continue;
      this.vaGrant[out * V + pick] = (r + 1) % inVcs;
      this.vaAccept[r] = (pick + 1) % V;
      (this.vcFree[out] as number[])[pick] = Number.POSITIVE_INFINITY;
      input.state = SA;
      this.waitingVa--;
      this.moves++;
      input.outVc = pick;
      input.eligible = tick + 1;
    }
    for (const q of touched) best[q] = -1;
  }

  /** Switch allocation, flit by flit: one iSLIP iteration over input ports x output ports. */
  private allocateSwitch(tick: number): void {
    const inputs = this.inputCount;
    const outputs = this.saBest.length;
    const V = this.vcs;
    const best = this.saBest;
    const touched = this.touched;
    touched.length = 0;
    // Grant: each output picks the requesting input first from its pointer.
    for (let i = 0; i < inputs; i++) {
      if (this.occupied[i] === 0 || (this.inBusy[i] as number) > tick) continue;
      for (let r = i * V; r < i * V + V; r++) {
        const out = this.request(this.inputVcs[r] as InputVc, tick);
        if (out < 0) continue;
        const current = best[out] as number;
        if (current === i) continue;
        if (current === -1) {
          best[out] = i;
          touched.push(out);
          continue;
        }
        const pointer = this.saGrant[out] as number;
        if ((i - pointer + inputs) % inputs < (current - pointer + inputs) % inputs) best[out] = i;
      }
    }
    if (touched.length === 0) return;
    // Accept: each input takes the granting output first from its pointer.
    for (let i = 0; i < inputs; i++) {
      if (this.occupied[i] === 0) continue;
      const pointer = this.saAccept[i] as number;
      let pick = -1;
      for (let k = 0; k < outputs && pick < 0; k++) {
        const out = (pointer + k) % outputs;
        if (best[out] === i) pick = out;
      }
      if (pick < 0) continue;
      this.saGrant[pick] = (i + 1) % inputs;
      this.saAccept[i] = (pick + 1) % outputs;
      this.cross(i, this.ready(i, pick, tick), pick, tick);
    }
    for (const out of touched) best[out] = -1;
  }

  /**
   * The output `input`'s front flit asks for at `tick`, or -1: towards a VC router, a flit in the
   * buffer with a credit of its output VC; towards anything else, a head whose flits (as many as
   * the buffer holds) are all in the buffer by the ticks they would leave, one per cycle, on a
   * free output.
   */
  private request(input: InputVc, tick: number): number {
    if (!input.flitReady(tick)) return -1;
    const packet = input.queue[0] as Held;
    const out = packet.out;
    if (this.downstreamOf(out) !== null) {
      return ((this.credits[out] as number[])[input.outVc] as number) > 0 ? out : -1;
    }
    if ((this.outBusy[out] as number) > tick) return -1;
    if (packet.toSink) return out;
    // Whole: the flits known by now (from a VC router: granted there before this tick).
    const fed = this.feederOf(packet.port) !== null;
    let known = packet.at.length;
    while (fed && known > 0 && (packet.at[known - 1] as number) - this.leaveTicks >= tick) known--;
    if (known < Math.min(packet.flits, this.buffer)) return -1;
    for (let k = 1; k < known; k++) if ((packet.at[k] as number) + packet.offset > tick + k) return -1;
    return out;
  }

  /** The VC of input `i` whose front flit may cross to `out` now (-1: none), round robin from the input's pointer. */
  private ready(i: number, out: number, tick: number): number {
    const V = this.vcs;
    const start = this.vcNext[i] as number;
    for (let k = 0; k < V; k++) {
      const vc = (start + k) % V;
      const input = this.inputVcs[i * V + vc] as InputVc;
      if (this.request(input, tick) === out) return vc;
    }
    return -1;
  }

  /** The front flit of input `i`'s VC `vc` won output `out` at `tick`: it leaves (the whole packet, towards a non-VC node). */
  private cross(i: number, vc: number, out: number, tick: number): void {
    const input = this.inputVcs[i * this.vcs + vc] as InputVc;
    const packet = input.queue[0] as Held;
    const next = this.downstreamOf(out);
    const outVc = input.outVc;
    const departTick = tick + this.leaveTicks;
    const view = packet.view as HopPacket;
    const feeder = this.feederOf(i);
    this.vcNext[i] = (vc + 1) % this.vcs;
    this.moves++;
    let tailTick = tick; // the tick its tail crosses
    if (next !== null || packet.toSink) {
      const flit = packet.sent++;
      if (flit === 0) {
        packet.headTick = departTick;
        this.waitedNs += departTick * this.cycleNs - packet.arrivedNs - this.params.first_flit_ns;
      }
      if (next !== null) {
        const row = this.credits[out] as number[];
        row[outVc] = (row[outVc] as number) - 1;
        if (flit === 0) {
          packet.next = next.announce(this.downstreamPort[out] as number, outVc, packet.flits);
          // The head goes on now, its flits follow through flitSent; the tail here is a placeholder.
          this.context.send(view, departTick * this.cycleNs, (departTick + packet.flits) * this.cycleNs);
        }
        next.flitSent(packet.next as Held, departTick);
      } else if (flit === packet.flits - 1) {
        // To its sink: sent once its tail has crossed, with when its head and tail left.
        const headNs = Math.max(packet.headTick * this.cycleNs, this.context.env.now);
        this.context.send(view, headNs, (departTick + 1) * this.cycleNs);
      }
      // The flit's slot on input i comes back to the VC router feeding it a cycle after it left.
      if (feeder !== null) feeder.credit(tick + 1, this.feederOut[i] as number, vc, 1);
      if (flit < packet.flits - 1) return;
    } else {
      // Whole: input and output held for its flits, its slots given back a cycle after its tail.
      packet.sent = packet.flits;
      packet.headTick = departTick;
      tailTick = tick + packet.flits - 1;
      this.inBusy[i] = tailTick + 1;
      this.outBusy[out] = tailTick + 1;
      this.waitedNs += departTick * this.cycleNs - packet.arrivedNs - this.params.first_flit_ns;
      this.context.send(view, departTick * this.cycleNs);
      if (feeder !== null) feeder.credit(tailTick + 1, this.feederOut[i] as number, vc, packet.at.length);
    }
    // The tail crossed: the VC routes its next head from the next cycle, the output VC is free.
    input.queue.shift();
    this.occupied[i] = (this.occupied[i] as number) - 1;
    input.state = IDLE;
    input.eligible = tailTick + 1;
    input.outVc = -1;
    (this.vcFree[out] as number[])[outVc] = tailTick + 1;
    this.held--;
    this.context.service(packet.headTick * this.cycleNs, packet.flits * this.cycleNs, view);
    if (feeder === null) {
      const env = this.context.env;
      const room = Math.min(packet.flits, this.buffer);
      env
        .timeout(Math.max(0, (tailTick + 1) * this.cycleNs - env.now), { port: i, vc, flits: room })
        .addCallback(this.roomBack);
    }
  }

  stats(): readonly ModelStat[] {
    return [
      { ...PORT_WAIT, total: this.waitedNs },
      { ...CREDIT_STALLS, total: this.refusals },
    ];
  }
}
