import type { Environment, Event } from "@kb/des";

const INF = Number.POSITIVE_INFINITY;

/** What the hub wakes: a port, by its index. */
export interface Sleeper {
  /** Called at (or just after) the time the port asked for. */
  wakeUp(now: number): void;
}

/**
 * One DES timer for all the ports of a stack: each port asks to be woken at a time (the latest
 * request replaces the earlier one); the hub keeps a heap of (time, port) and one timer at the
 * earliest. Ports whose times coincide (commands sit on the clock grid) share one event.
 */
export class WakeHub {
  private readonly times: Float64Array;
  private heapT = new Float64Array(64);
  private heapP = new Int32Array(64);
  private size = 0;
  private timerAt = INF;
  /** Waking ports: their new wake times are collected, one timer is set after. */
  private firing = false;
  private readonly fire = (): void => this.onTimer();

  /** `sleepers` may be filled after construction, up to `count` ports. */
  constructor(
    private readonly env: Environment,
    private readonly sleepers: readonly Sleeper[],
    count: number,
  ) {
    this.times = new Float64Array(count).fill(INF);
  }

  /** Wakes `port` at `at` (INF: never) instead of whatever it asked before. */
  wake(port: number, at: number): void {
    if (this.times[port] === at) return;
    this.times[port] = at;
    if (at === INF) return; // its heap entry, if any, goes stale
    this.push(at, port);
    if (at < this.timerAt && !this.firing) {
      const now = this.env.now;
      const delay = Math.max(0, at - now);
      this.timerAt = now + delay;
      (this.env.timeout(delay) as Event<unknown>).addCallback(this.fire);
    }
  }

  private onTimer(): void {
    const now = this.env.now;
    if (now !== this.timerAt) return; // superseded by an earlier timer
    this.timerAt = INF;
    this.firing = true;
    // Wake every port due now (a port woken may ask again: for now or later).
    while (this.size > 0 && (this.heapT[0] as number) <= now) {
      const t = this.heapT[0] as number;
      const port = this.heapP[0] as number;
      this.pop();
      if (this.times[port] !== t) continue; // stale
      this.times[port] = INF;
      (this.sleepers[port] as Sleeper).wakeUp(now);
    }
    this.firing = false;
    if (this.size > 0) {
      const at = this.heapT[0] as number;
      const delay = Math.max(0, at - now);
      this.timerAt = now + delay;
      (this.env.timeout(delay) as Event<unknown>).addCallback(this.fire);
    }
  }

  private push(t: number, port: number): void {
    if (this.size === this.heapT.length) {
      const heapT = new Float64Array(this.size * 2);
      heapT.set(this.heapT);
      this.heapT = heapT;
      const heapP = new Int32Array(this.size * 2);
      heapP.set(this.heapP);
      this.heapP = heapP;
    }
    const heapT = this.heapT;
    const heapP = this.heapP;
    let i = this.size++;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if ((heapT[parent] as number) <= t) break;
      heapT[i] = heapT[parent] as number;
      heapP[i] = heapP[parent] as number;
      i = parent;
    }
    heapT[i] = t;
    heapP[i] = port;
  }

  private pop(): void {
    const heapT = this.heapT;
    const heapP = this.heapP;
    const n = --this.size;
    if (n === 0) return;
    const t = heapT[n] as number;
    const port = heapP[n] as number;
    let i = 0;
    for (;;) {
      let child = 2 * i + 1;
      if (child >= n) break;
      if (child + 1 < n && (heapT[child + 1] as number) < (heapT[child] as number)) child++;
      if ((heapT[child] as number) >= t) break;
      heapT[i] = heapT[child] as number;
      heapP[i] = heapP[child] as number;
      i = child;
    }
    heapT[i] = t;
    heapP[i] = port;
  }
}
