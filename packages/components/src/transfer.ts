import type { Environment, Event } from "@kb/des";

/** A set of packets whose completion someone waits for: a DMA stage, a host copy. */
export class Transfer {
  /** Packets not yet accounted for. */
  remaining = 0;
  /** Latest completion time (ns) among accounted packets. */
  doneAt = 0;
  /** Bytes moved. */
  bytes = 0;
  /** Succeeds when every packet has arrived (or committed). */
  readonly done: Event<Transfer>;
  private sealed = false;

  constructor(private readonly env: Environment) {
    this.done = env.event();
  }

  /** @internal A packet will report to this transfer. */
  expect(): void {
    this.remaining++;
  }

  /** @internal A packet finished at `t` (>= now). */
  packetDone(t: number): void {
    this.packetsDone(t, 1);
  }

  /** @internal `count` packets (a bundle's) finished at `t` (>= now). */
  packetsDone(t: number, count: number): void {
    if (t > this.doneAt) this.doneAt = t;
    this.remaining -= count;
    if (this.remaining === 0 && this.sealed) this.finish();
  }

  /** @internal No more packets will be added; completes at once if none are outstanding. */
  seal(): void {
    this.sealed = true;
    if (this.remaining === 0) this.finish();
  }

  private finish(): void {
    const delay = this.doneAt - this.env.now;
    if (delay <= 0) this.done.succeed(this);
    else this.env.timeout(delay, this).addCallback(succeedTransfer);
  }
}

function succeedTransfer(event: Event<Transfer>): void {
  const transfer = event.value;
  transfer.done.succeed(transfer);
}
