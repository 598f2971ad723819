import type { Tracer } from "./trace.js";

/** The bin of the `HBM GB/s` trace counter, ns of simulated time. */
export const BANDWIDTH_BIN_NS = 1000;

/**
 * The `HBM GB/s` trace counter of a memory: each port's data-bus time summed into
 * {@link BANDWIDTH_BIN_NS} bins over the whole run, host copies included, and drawn when the trace
 * is exported (`Tracer.onFlush`): one point per busy bin at its start, `busy / bin x` the port's
 * bytes per ns, and 0 at the first idle bin after a busy one. Summing bins rather than sampling at
 * answer time counts a request's own bus time (a host copy is one long request per port, answered
 * at once, that no later request would pick up) and the bins of the run's end.
 * @internal
 */
export class BandwidthCounter {
  /** Per port, `[bin, busyNs, bin, busyNs, ...]` with bins in the order intervals came. */
  private readonly bins: number[][];
  private flushed = false;

  constructor(
    private readonly tracer: Tracer,
    private readonly id: string,
    ports: number,
    private readonly bytesPerNsPerPort: number,
  ) {
    this.bins = Array.from({ length: ports }, () => []);
    tracer.onFlush?.(() => this.flush());
  }

  /** Adds the bus time `[start, end)` of `port`. */
  add(port: number, start: number, end: number): void {
    const list = this.bins[port] as number[];
    let at = start;
    while (at < end) {
      const bin = Math.floor(at / BANDWIDTH_BIN_NS);
      const until = Math.min(end, (bin + 1) * BANDWIDTH_BIN_NS);
      const last = list.length - 2;
      if (last >= 0 && list[last] === bin) list[last + 1] = (list[last + 1] as number) + (until - at);
      else list.push(bin, until - at);
      at = until;
    }
  }

  /** Emits every port's points (once). */
  flush(): void {
    if (this.flushed || this.tracer.counter === undefined) return;
    this.flushed = true;
    this.bins.forEach((list, port) => {
      const track = `${this.id}#${port}`;
      const busy = new Map<number, number>();
      for (let i = 0; i < list.length; i += 2)
        busy.set(list[i] as number, (busy.get(list[i] as number) ?? 0) + (list[i + 1] as number));
      const bins = [...busy.keys()].sort((a, b) => a - b);
      bins.forEach((bin, index) => {
        const value = ((busy.get(bin) as number) / BANDWIDTH_BIN_NS) * this.bytesPerNsPerPort;
        this.tracer.counter?.("HBM GB/s", bin * BANDWIDTH_BIN_NS, track, value);
        if (bins[index + 1] !== bin + 1)
          this.tracer.counter?.("HBM GB/s", (bin + 1) * BANDWIDTH_BIN_NS, track, 0);
      });
      list.length = 0;
    });
  }
}
