import type { Message, Transfer } from "@kb/components";
import {
  Component,
  type ComponentContext,
  defineComponent,
  Packet,
  type PeProgram,
  type StageWork,
} from "@kb/components";
import { CONTROL_BYTES, ControlMessage, ProgramMessage, type SipLaunch } from "@kb/components/engine";
import type { Event } from "@kb/des";
import { KbError } from "@kb/errors";
import { queueDepthParam } from "@kb/spec";
import * as z from "zod";

interface CubeLaunch {
  readonly pes: readonly { pe: string; commands: PeProgram }[];
  readonly targetStartNs: number;
  readonly ioCpu: string;
}

const ioCpuParams = z.strictObject({
  forward_ns: z
    .number()
    .min(0)
    .default(50)
    .describe("Overhead per forwarded packet in ns (set by the topology)."),
  dispatch_ns: z
    .number()
    .min(0)
    .default(10)
    .describe("Time to send one launch message to a cube's M_CPU, ns."),
  barrier_margin_ns: z
    .number()
    .min(0)
    .default(0)
    .describe("Slack added to the computed global start time (targetStartNs), ns."),
  queue_depth: queueDepthParam(16),
});

/**
 * IO_CPU: forwards host and inter-SIP traffic (forward_ns per packet), fans a launch out to the
 * cubes' M_CPUs with a global start barrier, and aggregates the cubes' completions. @internal
 */
export class IoCpuV1 extends Component<z.output<typeof ioCpuParams>> {
  private readonly pending = new Map<string, { left: number; transfer: Transfer }>();
  private mCpuDispatchNs = 0;

  constructor(context: ComponentContext, params: z.output<typeof ioCpuParams>) {
    super(context, params, { queueDepth: params.queue_depth });
  }

  override init(): void {
    const mCpu = this.machine.components.find(
      (component) => component.kind === "m_cpu" && component.node.sip === this.node.sip,
    );
    const dispatch = (mCpu?.params as { dispatch_ns?: number } | undefined)?.dispatch_ns;
    this.mCpuDispatchNs = typeof dispatch === "number" ? dispatch : 0;
  }

  process(message: Message): StageWork | Event<unknown> | null {
    if (message instanceof Packet) {
      this.stats.bytes += message.bytes;
      return this.params.forward_ns > 0 ? this.env.timeout(this.params.forward_ns) : null;
    }
    if (message instanceof ControlMessage && message.action === "sip_launch") return this.launch(message);
    if (message instanceof ControlMessage && message.action === "cube_done") {
      const entry = this.pending.get(message.key);
      if (entry === undefined) throw unexpected(this, message);
      entry.left--;
      if (entry.left === 0) {
        this.pending.delete(message.key);
        this.machine.fabric.notify(this.id, "host", entry.transfer, CONTROL_BYTES);
      }
      return null;
    }
    throw unexpected(this, message);
  }

  /**
   * The global start time: for every target PE, when its launch message would arrive uncontended
   * (IO_CPU dispatch of the cubes in order, the IO_CPU -> M_CPU path, M_CPU dispatch of the PEs in
   * order, the M_CPU -> PE_CPU path, each path `latency + bytes / bw`); the latest, plus
   * `barrier_margin_ns`.
   */
  private *launch(message: ControlMessage): StageWork {
    const { cubes, transfer } = message.payload as SipLaunch;
    const fabric = this.machine.fabric;
    const sip = this.node.sip as number;
    const cubeOrder = [...cubes.keys()].sort((a, b) => a - b);
    let target = 0;
    cubeOrder.forEach((cube, k) => {
      const mCpu = `sip${sip}.cube${cube}.m_cpu`;
      const toCube = fabric.path(this.id, mCpu, "deliver");
      const atCube =
        this.env.now + (k + 1) * this.params.dispatch_ns + toCube.latencyNs + CONTROL_BYTES / toCube.minBwGbs;
      (cubes.get(cube) ?? []).forEach((entry, j) => {
        const toPe = fabric.path(mCpu, `${entry.pe}.pe_cpu`, "deliver");
        const atPe = atCube + (j + 1) * this.mCpuDispatchNs + toPe.latencyNs + CONTROL_BYTES / toPe.minBwGbs;
        if (atPe > target) target = atPe;
      });
    });
    target += this.params.barrier_margin_ns;
    this.pending.set(message.key, { left: cubeOrder.length, transfer });
    for (const cube of cubeOrder) {
      if (this.params.dispatch_ns > 0) yield this.env.timeout(this.params.dispatch_ns);
      const launch: CubeLaunch = { pes: cubes.get(cube) ?? [], targetStartNs: target, ioCpu: this.id };
      fabric.send(
        this.id,
        `sip${sip}.cube${cube}.m_cpu`,
        new ControlMessage("cube_launch", message.key, launch),
        CONTROL_BYTES,
      );
    }
  }
}

function unexpected(component: Component, message: Message): KbError {
  return new KbError(
    "MACHINE_INVARIANT",
    `${component.kind} received an unexpected message "${message.label}".`,
    {
      context: { nodeId: component.id, simTimeNs: component.env.now },
    },
  );
}

export const ioCpuV1 = defineComponent({
  kind: "io_cpu",
  impl: "io_cpu_v1",
  analytic: true,
  description:
    "SIP host interface: forwards host <-> cube and SIP <-> SIP packets (forward_ns each), fans launches out to M_CPUs (dispatch_ns each) with a global start barrier, aggregates completions.",
  params: ioCpuParams,
  create: (context, params) => new IoCpuV1(context, params),
});

const mCpuParams = z.strictObject({
  dispatch_ns: z.number().min(0).default(5).describe("Time to send one launch message to a PE_CPU, ns."),
  queue_depth: queueDepthParam(64),
});

/** M_CPU: fans a cube launch out to its PEs and reports when all of them completed. @internal */
export class MCpuV1 extends Component<z.output<typeof mCpuParams>> {
  private readonly pending = new Map<string, { left: number; ioCpu: string }>();

  constructor(context: ComponentContext, params: z.output<typeof mCpuParams>) {
    super(context, params, { queueDepth: params.queue_depth });
  }

  process(message: Message): StageWork | null {
    if (message instanceof ControlMessage && message.action === "cube_launch") return this.fanOut(message);
    if (message instanceof ControlMessage && message.action === "pe_done") {
      const entry = this.pending.get(message.key);
      if (entry === undefined) throw unexpected(this, message);
      entry.left--;
      if (entry.left === 0) {
        this.pending.delete(message.key);
        this.machine.fabric.send(
          this.id,
          entry.ioCpu,
          new ControlMessage("cube_done", message.key, null),
          CONTROL_BYTES,
        );
      }
      return null;
    }
    throw unexpected(this, message);
  }

  private *fanOut(message: ControlMessage): StageWork {
    const launch = message.payload as CubeLaunch;
    this.pending.set(message.key, { left: launch.pes.length, ioCpu: launch.ioCpu });
    for (const { pe, commands } of launch.pes) {
      if (this.params.dispatch_ns > 0) yield this.env.timeout(this.params.dispatch_ns);
      const program = new ProgramMessage(message.key, commands, launch.targetStartNs, this.env.event(), {
        mCpu: this.id,
        key: message.key,
      });
      this.machine.fabric.send(this.id, `${pe}.pe_cpu`, program, CONTROL_BYTES);
    }
  }
}

export const mCpuV1 = defineComponent({
  kind: "m_cpu",
  impl: "m_cpu_v1",
  analytic: true,
  description:
    "Cube manager: fans a launch out to the cube's PE_CPUs over the NOC (dispatch_ns per PE) and reports to IO_CPU when every PE completed.",
  params: mCpuParams,
  create: (context, params) => new MCpuV1(context, params),
});
