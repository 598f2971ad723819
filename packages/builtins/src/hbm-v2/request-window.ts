import type { HbmTiming } from "./presets.js";

/**
 * The column times of a queue's bursts still ahead (a binary min-heap: bursts of later requests
 * may take earlier slots, so the times are not in arrival order).
 */
export class TimeHeap {
  private buf = new Float64Array(64);
  size = 0;
  push(t: number): void {
    if (this.size === this.buf.length) {
      const grown = new Float64Array(this.buf.length * 2);
      grown.set(this.buf);
      this.buf = grown;
    }
    const h = this.buf;
    let i = this.size++;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      const p = h[parent] as number;
      if (p <= t) break;
      h[i] = p;
      i = parent;
    }
    h[i] = t;
  }
  /** Drops the times at or before `now` (they left the queue). */
  drop(now: number): void {
    const h = this.buf;
    while (this.size > 0 && (h[0] as number) <= now) {
      const last = h[--this.size] as number;
      const n = this.size;
      let i = 0;
      for (;;) {
        let child = 2 * i + 1;
        if (child >= n) break;
        if (child + 1 < n && (h[child + 1] as number) < (h[child] as number)) child++;
        if ((h[child] as number) >= last) break;
        h[i] = h[child] as number;
        i = child;
      }
      h[i] = last;
    }
  }
}

/**
 * Times kept in order (a window of the last `kept`, in twice that room), with columns of facts
 * beside them: what {@link ActWindow} and {@link ColumnWindow} share. A time further than
 * `reach` before another cannot constrain it.
 */
abstract class TimeWindow {
  protected readonly t: Float64Array;
  protected head = 0;
  protected n = 0;

  constructor(
    private readonly kept: number,
    protected readonly reach: number,
    private readonly columns: readonly (Int8Array | Int16Array | Int32Array)[],
  ) {
    this.t = new Float64Array(kept * 2);
  }

  /** Forgets the times that can no longer constrain one at or after `now`. */
  prune(now: number): void {
    const T = this.t;
    const end = this.head + this.n;
    let h = this.head;
    while (h < end && (T[h] as number) + this.reach <= now) h++;
    this.n -= h - this.head;
    this.head = this.n === 0 ? 0 : h;
  }

  /** Index of the first kept time later than `time`. */
  protected firstAfter(time: number): number {
    const T = this.t;
    let lo = this.head;
    let hi = this.head + this.n;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((T[mid] as number) <= time) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** The oldest time, at `index`, leaves a full window: what it leaves behind (a floor). */
  protected abstract leave(index: number): void;

  /** Puts `at` in order (the oldest leaving a full window); returns its index, for the columns. */
  protected place(at: number): number {
    if (this.n === this.kept) {
      this.leave(this.head);
      this.head++;
      this.n--;
    }
    if (this.head + this.n === this.t.length) {
      // Compact (the window holds at most `kept` in twice that room).
      const from = this.head;
      const to = this.head + this.n;
      this.t.copyWithin(0, from, to);
      for (const column of this.columns) column.copyWithin(0, from, to);
      this.head = 0;
    }
    const i = this.firstAfter(at);
    const end = this.head + this.n;
    if (i < end) {
      this.t.copyWithin(i + 1, i, end);
      for (const column of this.columns) column.copyWithin(i + 1, i, end);
    }
    this.t[i] = at;
    this.n++;
    return i;
  }
}

/** ACTs an {@link ActWindow} keeps at most (older ones leave only a floor). */
const ACTS_KEPT = 16;

/**
 * The recent and planned ACTs of a pseudo-channel (time order) and their bank groups, for tRRD
 * and tFAW: a new ACT may fall between earlier ones.
 */
export class ActWindow extends TimeWindow {
  private readonly g: Int32Array;
  /** The earliest ACT the ACTs that left the window allow. */
  private floor = 0;

  constructor(private readonly timing: HbmTiming) {
    const g = new Int32Array(ACTS_KEPT * 2);
    super(ACTS_KEPT, Math.max(timing.tFAW, timing.tRRD_L, timing.tRRD_S), [g]);
    this.g = g;
  }

  /**
   * The earliest time at or after `from` an ACT of bank group `group` may issue: at least tRRD_S
   * (tRRD_L same group) from every kept ACT, at most four ACTs in any tFAW (exact when it follows
   * them; between them it asks for fewer than four within tFAW on either side); records it.
   */
  slot(from: number, group: number): number {
    const t = this.timing;
    const faw = t.tFAW;
    const reach = this.reach;
    const T = this.t;
    const G = this.g;
    const end = this.head + this.n;
    let at = Math.max(from, this.floor);
    // `i` only moves forward: the ACTs before it are at least `reach` before `at`.
    let i = this.firstAfter(at - reach);
    for (;;) {
      while (i < end && (T[i] as number) <= at - reach) i++;
      let moved = false;
      let inWindow = 0;
      let firstInWindow = -1;
      for (let j = i; j < end; j++) {
        const a = T[j] as number;
        if (a >= at + reach) break;
        const d = (G[j] as number) === group ? t.tRRD_L : t.tRRD_S;
        if (at > a - d && at < a + d) {
          at = a + d;
          moved = true;
          break;
        }
        if (a > at - faw && a < at + faw) {
          if (firstInWindow < 0) firstInWindow = j;
          inWindow++;
        }
      }
      if (moved) continue;
      if (inWindow < 4) break;
      at = (T[firstInWindow] as number) + faw;
    }
    this.insert(at, group);
    return at;
  }

  private insert(at: number, group: number): void {
    this.g[this.place(at)] = group;
  }

  protected leave(index: number): void {
    this.floor = Math.max(this.floor, (this.t[index] as number) + this.timing.tRRD_L);
  }
}

/** Column commands a {@link ColumnWindow} keeps at most (older ones leave only a floor). */
const COLUMNS_KEPT = 16;

/** Index of the gap from a command (kind, same group, same SID) to the next (kind). */
const gapAt = (prev: number, sameGroup: number, sameSid: number, next: number): number =>
  prev * 8 + sameGroup * 4 + sameSid * 2 + next;

/**
 * The last column commands of a pseudo-channel (time order; kind 0 RD / 1 WR, bank group, SID),
 * so that a later burst may take a gap between them (the data bus is not in arrival order):
 * after a command p, a command f waits RD->RD max(tBL, tCCD_S same SID / tCCD_R other, tCCD_L
 * same bank group), WR->WR max(tBL, tCCD_S same SID, tCCD_L same group), RD->WR tRTW, WR->RD
 * tCWL + tBL + tWTR_S (tWTR_L same group), each at least one column command slot (colCmd). The
 * bank's own constraints (tRCD after its ACT) are the caller's.
 */
export class ColumnWindow extends TimeWindow {
  private readonly kind: Int8Array;
  private readonly group: Int16Array;
  private readonly sid: Int16Array;
  /** The earliest RD and WR the commands that left the window allow. */
  private floorRd = 0;
  private floorWr = 0;

  private constructor(private readonly gaps: Float64Array) {
    const kind = new Int8Array(COLUMNS_KEPT * 2);
    const group = new Int16Array(COLUMNS_KEPT * 2);
    const sid = new Int16Array(COLUMNS_KEPT * 2);
    // The largest gap: commands further apart cannot constrain each other.
    super(COLUMNS_KEPT, Math.max(...gaps), [kind, group, sid]);
    this.kind = kind;
    this.group = group;
    this.sid = sid;
  }

  /** A window with `timing`'s gaps between column commands. */
  static of(timing: HbmTiming): ColumnWindow {
    const t = timing;
    const c = t.colCmd;
    const g = new Float64Array(16);
    for (const sameSid of [0, 1]) {
      for (const sameGroup of sameSid === 1 ? [0, 1] : [0]) {
        const ccd = sameGroup === 1 ? t.tCCD_L : sameSid === 1 ? t.tCCD_S : 0;
        g[gapAt(0, sameGroup, sameSid, 0)] = Math.max(t.tBL, c, ccd, sameSid === 1 ? 0 : t.tCCD_R);
        g[gapAt(1, sameGroup, sameSid, 1)] = Math.max(t.tBL, c, ccd);
        g[gapAt(0, sameGroup, sameSid, 1)] = Math.max(t.tRTW, c);
        g[gapAt(1, sameGroup, sameSid, 0)] = Math.max(
          t.tCWL + t.tBL + (sameGroup === 1 ? t.tWTR_L : t.tWTR_S),
          c,
        );
      }
    }
    return new ColumnWindow(g);
  }

  /**
   * The earliest time at or after `from` a column command of `kind`, bank group `group` (flat,
   * SIDs included) and SID `sid` fits; records it.
   */
  slot(from: number, kind: number, group: number, sid: number): number {
    const T = this.t;
    const K = this.kind;
    const G = this.group;
    const S = this.sid;
    const gaps = this.gaps;
    const reach = this.reach;
    const end = this.head + this.n;
    let at = Math.max(from, kind === 0 ? this.floorRd : this.floorWr);
    // One walk in time order: `need` is the latest time the commands walked so far (each before
    // `at` when walked) allow; a later command too close to `at` moves it past that command.
    let need = at;
    for (let i = this.firstAfter(at - reach); i < end; i++) {
      const x = T[i] as number;
      if (x >= at + reach) break;
      const same = ((G[i] as number) === group ? 4 : 0) + ((S[i] as number) === sid ? 2 : 0);
      const xk = K[i] as number;
      const after = x + (gaps[xk * 8 + same + kind] as number);
      if (x <= at) {
        if (after > need) need = after;
        if (need > at) at = need;
      } else if (x < at + (gaps[kind * 8 + same + xk] as number)) {
        // Past x: also past what the commands walked before it need.
        if (after > need) need = after;
        at = need;
      } else if (after > need) need = after;
    }
    this.insert(at, kind, group, sid);
    return at;
  }

  private insert(at: number, kind: number, group: number, sid: number): void {
    const i = this.place(at);
    this.kind[i] = kind;
    this.group[i] = group;
    this.sid[i] = sid;
  }

  protected leave(index: number): void {
    // The oldest leaves a floor (the largest gap of its kind: conservative).
    const x = this.t[index] as number;
    const xk = this.kind[index] as number;
    this.floorRd = Math.max(this.floorRd, x + (this.gaps[xk * 8 + 6] as number));
    this.floorWr = Math.max(this.floorWr, x + (this.gaps[xk * 8 + 7] as number));
  }
}
