import { KbError } from "@kb/errors";
import type { DeviceTensor, LaunchRecord } from "@kb/runtime";
import type { Transfer } from "./algorithms/p2p.js";
import type { Region } from "./kernel-support.js";

/** Which side of a point-to-point transfer an op is. */
export type P2POpKind = "isend" | "irecv";

/**
 * One op of `batchIsendIrecv` (torch `P2POp`): `rank` sends `tensor` to `peer` (`"isend"`) or
 * receives it from `peer` into `tensor` (`"irecv"`). One host program drives every rank, so each
 * op says whose it is: `rank` (default 0, what `getRank()` returns).
 */
export interface P2POp {
  readonly op: P2POpKind;
  readonly tensor: DeviceTensor;
  readonly peer: number;
  readonly rank?: number;
  /** Sends match receives of the same tag, in the order they were posted (default 0). */
  readonly tag?: number;
}

/** What a point-to-point op did: the launch that moved it and the transfers that launch moved. */
export interface P2PResult {
  /** Matched send/receive pairs the launch moved (this op's among them). */
  readonly transfers: number;
  readonly launch: LaunchRecord;
}

/** The handle of an asynchronous op (torch `Work`). */
export interface Work {
  /**
   * Runs every matched pending op (one kernel launch) unless this one ran already, and returns
   * its result. Throws `RUNTIME_INVALID` when no rank posted the op's partner: with one host
   * program for every rank, that would wait forever.
   */
  wait(): Promise<P2PResult>;
  /** True once the op has run. */
  isCompleted(): boolean;
}

interface Pending {
  readonly op: P2POpKind;
  readonly rank: number;
  readonly peer: number;
  readonly tag: number;
  readonly tensor: DeviceTensor;
  /** The launch's result, or what it threw (every op of the launch throws it). */
  outcome?: { result: P2PResult } | { error: unknown };
}

function settled(outcome: { result: P2PResult } | { error: unknown }): P2PResult {
  if ("error" in outcome) throw outcome.error;
  return outcome.result;
}

/** Runs matched transfers as one launch (the process group's p2p kernel). */
export type LaunchTransfers = (transfers: readonly Transfer[]) => Promise<LaunchRecord>;

/**
 * The ops posted and not yet run, matched as NCCL does: a send of `rank` to `peer` with a receive
 * of `peer` from `rank` with the same tag, in posting order.
 */
export class P2PQueue {
  private pending: Pending[] = [];
  private running: Promise<void> | null = null;

  constructor(
    private readonly worldSize: number,
    private readonly launch: LaunchTransfers,
    private readonly now: () => number,
    /** How a wait awaits another wait's launch (`Simulator.waitFor`: host streams share a queue). */
    private readonly waitFor: (running: Promise<void>) => Promise<void> = (running) => running,
  ) {}

  /** Posts `op` and returns its handle; nothing runs until a handle is waited on. */
  post(op: P2POp, method: string): Work {
    const rank = op.rank ?? 0;
    const tag = op.tag ?? 0;
    const n = this.worldSize;
    for (const [name, value] of [
      ["rank", rank],
      [op.op === "isend" ? "dst" : "src", op.peer],
    ] as const) {
      if (!Number.isInteger(value) || value < 0 || value >= n) {
        throw new KbError("RUNTIME_INVALID", `${method}: ${name} must be a rank 0..${n - 1}, got ${value}.`);
      }
    }
    if (op.op !== "isend" && op.op !== "irecv") {
      throw new KbError(
        "RUNTIME_INVALID",
        `${method}: op must be "isend" or "irecv", got ${JSON.stringify(op.op)}.`,
      );
    }
    if (op.peer === rank) {
      throw new KbError(
        "RUNTIME_INVALID",
        `${method}: rank ${rank} ${op.op === "isend" ? "sends to" : "receives from"} itself; the peer must be another rank (copy the tensor instead).`,
      );
    }
    if (!Number.isInteger(tag))
      throw new KbError("RUNTIME_INVALID", `${method}: tag must be a whole number, got ${tag}.`);
    const entry: Pending = { op: op.op, rank, peer: op.peer, tag, tensor: op.tensor };
    this.pending.push(entry);
    return {
      wait: () => this.wait(entry),
      isCompleted: () => entry.outcome !== undefined,
    };
  }

  private async wait(entry: Pending): Promise<P2PResult> {
    // Waits called together (Promise.all of a batch's handles) share the launch of the first.
    while (this.running !== null) await this.waitFor(this.running);
    if (entry.outcome !== undefined) return settled(entry.outcome);
    const pairs = this.match();
    if (pairs.length > 0) {
      this.pending = this.pending.filter((p) => !pairs.some(([send, recv]) => p === send || p === recv));
      const run = async () => {
        const transfers = pairs.map(([send, recv]) => ({
          src: send.rank,
          dst: recv.rank,
          from: region(send),
          to: region(recv),
        }));
        let outcome: { result: P2PResult } | { error: unknown };
        try {
          outcome = { result: { transfers: pairs.length, launch: await this.launch(transfers) } };
        } catch (error) {
          outcome = { error };
        }
        for (const op of pairs.flat()) op.outcome = outcome;
      };
      this.running = run();
      try {
        await this.running;
      } finally {
        this.running = null;
      }
    }
    if (entry.outcome !== undefined) return settled(entry.outcome);
    const others = this.pending.filter((p) => p !== entry).map(describe);
    throw new KbError(
      "RUNTIME_INVALID",
      `deadlock at simulated time ${this.now()} ns: ${describe(entry)} waits for rank ${entry.peer}, which posted no matching ${entry.op === "isend" ? `irecv from rank ${entry.rank}` : `isend to rank ${entry.rank}`} (tag ${entry.tag}). One host program drives every rank: post both sides before waiting (isend / irecv / batchIsendIrecv return at once; send / recv wait).${others.length > 0 ? ` Also unmatched: ${others.join("; ")}.` : ""}`,
    );
  }

  /** Pairs of a pending send and its receive, in the order the sends were posted. */
  private match(): [Pending, Pending][] {
    const pairs: [Pending, Pending][] = [];
    const taken = new Set<Pending>();
    for (const send of this.pending) {
      if (send.op !== "isend") continue;
      const recv = this.pending.find(
        (p) =>
          p.op === "irecv" &&
          !taken.has(p) &&
          p.rank === send.peer &&
          p.peer === send.rank &&
          p.tag === send.tag,
      );
      if (recv === undefined) continue;
      const [a, b] = [send.tensor, recv.tensor];
      if (a.size !== b.size || a.dtype !== b.dtype) {
        throw new KbError(
          "RUNTIME_INVALID",
          `${describe(send)} does not fit ${describe(recv)}: the sizes and dtypes of a send and its receive must match.`,
        );
      }
      taken.add(recv);
      pairs.push([send, recv]);
    }
    return pairs;
  }
}

function region(entry: Pending): Region {
  return { address: entry.tensor.address, count: entry.tensor.size, dtype: entry.tensor.dtype };
}

function describe(entry: Pending): string {
  const what = `${entry.tensor.size} x ${entry.tensor.dtype}`;
  return entry.op === "isend"
    ? `rank ${entry.rank}'s isend of ${what} to rank ${entry.peer}`
    : `rank ${entry.rank}'s irecv of ${what} from rank ${entry.peer}`;
}
