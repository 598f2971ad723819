import type { Event, ForwardingModelContext } from "@kb/components";

// The clock of the VC routers (vc-router.ts): every VC router of an engine with the same clock
// period is stepped tick by tick by one `VcClock`, in batches of ticks, one engine event per batch.

/** What a clock steps: a VC router. */
export interface Clocked {
  /** One cycle of the router. */
  step(tick: number): void;
  /** Has packets to move or credits to take back. */
  busy(): boolean;
}

/** Every VC router of one engine, by node id, and the clocks that step them. */
export interface Fabric<R extends Clocked = Clocked> {
  readonly routers: Map<string, R>;
  readonly clocks: Map<string, VcClock>;
}

const fabrics = new WeakMap<object, Fabric<Clocked>>();

export function fabricOf<R extends Clocked>(env: object): Fabric<R> {
  let fabric = fabrics.get(env);
  if (fabric === undefined) {
    fabric = { routers: new Map(), clocks: new Map() };
    fabrics.set(env, fabric);
  }
  return fabric as Fabric<R>;
}

/** Steps the VC routers of one clock period in batches of ticks, one engine event per batch. */
export class VcClock {
  private readonly active = new Set<Clocked>();
  private scheduled = false;
  /** The first tick not stepped yet. */
  private next = 0;

  constructor(
    private readonly env: ForwardingModelContext["env"],
    private readonly cycleNs: number,
    private readonly batch: number,
  ) {}

  /** A router has work from `tick` on: make sure a batch covering it runs in time. */
  wake(router: Clocked, tick: number): void {
    this.active.add(router);
    if (this.scheduled) return;
    const first = Math.max(this.next, Math.floor(tick / this.batch) * this.batch);
    this.schedule(first);
  }

  private schedule(first: number): void {
    this.scheduled = true;
    this.next = first;
    const at = (first + this.batch - 0.5) * this.cycleNs;
    this.env.timeout(Math.max(0, at - this.env.now), first).addCallback(this.run);
  }

  private readonly run = (event: Event<number>): void => {
    this.scheduled = false;
    const first = event.value;
    const end = first + this.batch;
    for (let tick = first; tick < end; tick++) {
      for (const router of this.active) router.step(tick);
    }
    this.next = end;
    for (const router of this.active) if (!router.busy()) this.active.delete(router);
    if (this.active.size > 0) this.schedule(end);
  };
}
