import {
  E_LIST,
  E_NEXT,
  E_PREV,
  E_PRIO,
  E_STATE,
  E_STRIDE,
  LIST_PRIO,
  LIST_READS,
  LIST_WRITES,
  P_HEAD,
  P_OVR,
  P_OVW,
  P_RHEAD,
  P_RQ,
  P_WHEAD,
  P_WQ,
  READ,
  WRITE,
} from "./layout.js";
import { PortState } from "./port-state.js";

/**
 * The read and write queues of a pseudo-channel: entries wait (per kind, first come first
 * admitted) until their bursts fit, then join one of three lists, each in admission order: the
 * priority list (entries that opened their bank, Ramulator's active buffer), class-1 reads and
 * class-1 writes.
 */
export abstract class PortQueue extends PortState {
  /** Moves waiting entries into the read and write queues while they fit (FIFO per kind), at `time`. */
  admit(time: number): void {
    for (let kind = 0; kind < 2; kind++) {
      const list = this.overflow[kind] as number[];
      const headAt = this.portBase + (kind === READ ? P_OVR : P_OVW);
      const occAt = this.portBase + (kind === READ ? P_RQ : P_WQ);
      const cap = kind === READ ? this.config.readQueue : this.config.writeQueue;
      let head = this.st[headAt] as number;
      if (head >= list.length) continue;
      let occ = this.st[occAt] as number;
      // The channel's other pseudo-channels fill the same queue (queue_scope: channel).
      const shared = this.peerSum(kind === READ ? P_RQ : P_WQ);
      while (head < list.length) {
        const e = list[head] as number;
        const bursts = this.eBursts[e] as number;
        if (occ + shared + bursts > cap && occ + shared > 0) break;
        // It joins the queue when the room is made: no command of it before then.
        if ((this.eReady[e] as number) < time) this.setReady(e, time);
        this.append(e);
        occ += bursts;
        head++;
      }
      this.setS(headAt, head);
      this.setOccupancy(kind, occ, time);
    }
  }

  /** Bursts a queue of `kind` can take now without waiting. */
  room(kind: number): number {
    if (this.waitingRoom(kind)) return 0;
    for (const peer of this.peers) if (peer.waitingRoom(kind)) return 0;
    const occAt = kind === READ ? P_RQ : P_WQ;
    const cap = kind === READ ? this.config.readQueue : this.config.writeQueue;
    return Math.max(0, cap - (this.st[this.portBase + occAt] as number) - this.peerSum(occAt));
  }

  /** Offset in `st` of a list's head (its tail follows). */
  listHead(list: number): number {
    return this.portBase + (list === LIST_PRIO ? P_HEAD : list === LIST_READS ? P_RHEAD : P_WHEAD);
  }

  /** Appends a newly admitted entry to its list: the priority list if it has priority. */
  private append(e: number): void {
    const o = e * E_STRIDE;
    this.setE(o + E_STATE, 0);
    // No lower bound yet: one a prediction left (it may have admitted the entry, then rolled
    // back) is of a later state and can be too high.
    this.eLB[e] = Number.NEGATIVE_INFINITY;
    this.eBlk[e] = -1;
    const list =
      (this.ed[o + E_PRIO] as number) === 1 ? LIST_PRIO : this.eKind[e] === READ ? LIST_READS : LIST_WRITES;
    this.link(e, list);
  }

  private link(e: number, list: number): void {
    const h = this.listHead(list);
    const o = e * E_STRIDE;
    const tail = this.st[h + 1] as number;
    this.setE(o + E_LIST, list);
    this.setE(o + E_PREV, tail);
    this.setE(o + E_NEXT, -1);
    if (tail >= 0) this.setE(tail * E_STRIDE + E_NEXT, e);
    else this.setS(h, e);
    this.setS(h + 1, e);
  }

  /** Takes an entry off its list. */
  unlink(e: number): void {
    const o = e * E_STRIDE;
    const h = this.listHead(this.ed[o + E_LIST] as number);
    const prev = this.ed[o + E_PREV] as number;
    const next = this.ed[o + E_NEXT] as number;
    if (prev >= 0) this.setE(prev * E_STRIDE + E_NEXT, next);
    else this.setS(h, next);
    if (next >= 0) this.setE(next * E_STRIDE + E_PREV, prev);
    else this.setS(h + 1, prev);
    this.setE(o + E_LIST, -1);
  }

  /** Gives an entry priority (its bank opened for it, or its request started). */
  promote(e: number): void {
    const o = e * E_STRIDE;
    if ((this.ed[o + E_PRIO] as number) === 1) return;
    this.setE(o + E_PRIO, 1);
    if ((this.ed[o + E_LIST] as number) > LIST_PRIO) {
      this.unlink(e);
      this.link(e, LIST_PRIO);
    }
  }

  /**
   * Takes an entry's priority back (`active_buffer: burst`: the burst its ACT was for issued): it
   * rejoins its kind's list at its age, and no longer holds its bank open.
   */
  demote(e: number): void {
    const o = e * E_STRIDE;
    this.setE(o + E_PRIO, 0);
    if ((this.ed[o + E_LIST] as number) !== LIST_PRIO) return;
    this.unlink(e);
    const list = this.eKind[e] === READ ? LIST_READS : LIST_WRITES;
    const h = this.listHead(list);
    // Each list is in admission order, which is age order within a kind: find the last older entry.
    let before = this.st[h + 1] as number;
    while (before >= 0 && (this.eSeq[before] as number) > (this.eSeq[e] as number)) {
      before = this.ed[before * E_STRIDE + E_PREV] as number;
    }
    const after = before >= 0 ? (this.ed[before * E_STRIDE + E_NEXT] as number) : (this.st[h] as number);
    this.setE(o + E_LIST, list);
    this.setE(o + E_PREV, before);
    this.setE(o + E_NEXT, after);
    if (before >= 0) this.setE(before * E_STRIDE + E_NEXT, e);
    else this.setS(h, e);
    if (after >= 0) this.setE(after * E_STRIDE + E_PREV, e);
    else this.setS(h + 1, e);
    this.eLB[e] = Number.NEGATIVE_INFINITY;
    this.eBlk[e] = -1;
  }

  /** Whether no entry is queued (admitted): the priority, read and write lists are empty. */
  private get listsEmpty(): boolean {
    const p = this.portBase;
    const st = this.st;
    return (
      (st[p + P_HEAD] as number) < 0 && (st[p + P_RHEAD] as number) < 0 && (st[p + P_WHEAD] as number) < 0
    );
  }

  /** Whether entries wait for room (not admitted yet). */
  private get waiting(): boolean {
    const p = this.portBase;
    return (
      (this.st[p + P_OVR] as number) < this.overflow[READ].length ||
      (this.st[p + P_OVW] as number) < this.overflow[WRITE].length
    );
  }

  /**
   * Whether no entry is queued while some wait for room: only a peer of the channel's queue
   * (queue_scope: channel) can admit them, by issuing its own bursts.
   */
  get waitingOnPeers(): boolean {
    return this.listsEmpty && this.waiting;
  }

  /** Whether nothing is queued or waiting. */
  get empty(): boolean {
    return this.listsEmpty && !this.waiting;
  }
}
