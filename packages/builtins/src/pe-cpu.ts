import type { Message } from "@kb/components";
import {
  type CommandSource,
  Component,
  type ComponentContext,
  defineComponent,
  type IpcqConfig,
  IpcqNetwork,
  ipcqConfigOf,
  type PeProgram,
  type StageWork,
} from "@kb/components";
import {
  CONTROL_BYTES,
  ControlMessage,
  ns,
  ProgramMessage,
  peOf,
  Submission,
  wrongMessage,
} from "@kb/components/engine";
import { Event } from "@kb/des";
import { KbError } from "@kb/errors";
import { type IpcqRecvCommand, type PeCommand, queueDepthParam } from "@kb/spec";
import * as z from "zod";

// ---------------------------------------------------------------------------------------------
// PE_CPU

const peCpuParams = z.strictObject({
  dispatch_ns: ns("Time to issue one command to the scheduler, ns.", 2),
  freq_ghz: z.number().positive().default(1).describe("Clock of the PE_CPU, GHz (cycles commands)."),
  ipcq_slots: z.number().int().min(1).default(4).describe("Slots of each inter-PE queue (per direction)."),
  ipcq_slot_bytes: z
    .number()
    .int()
    .min(64)
    .default(16384)
    .describe("Bytes of an IPCQ slot: the largest payload of one tl.send."),
  ipcq_slot_read_ns: ns("Fixed latency of reading a received IPCQ slot, ns.", 2),
  ipcq_read_gbs: z.number().positive().default(512).describe("Bandwidth of reading an IPCQ slot, GB/s."),
  queue_depth: queueDepthParam(4),
});

/** PE_CPU: runs a command list, submitting each command to its PE_SCHEDULER (ADR-0014 D1). @internal */
export class PeCpuV1 extends Component<z.output<typeof peCpuParams>> {
  private scheduler!: Component;
  /** Launches whose PEs arrived after the global start time (contention on the launch path). */
  lateStarts = 0;

  constructor(context: ComponentContext, params: z.output<typeof peCpuParams>) {
    super(context, params, { queueDepth: params.queue_depth, countProcessTime: false });
  }

  override init(): void {
    this.scheduler = this.machine.component(`${peOf(this)}.pe_scheduler`);
    const tcm = this.machine.component(`${peOf(this)}.pe_tcm`).params as Record<string, unknown>;
    this.ipcqConfig = ipcqConfigOf(this.params, Number(tcm.capacity_bytes));
    this.ipcq = IpcqNetwork.of(this.machine);
  }

  private ipcq!: IpcqNetwork;
  /** Queue geometry: this PE's slots live at the end of its TCM. */
  ipcqConfig!: IpcqConfig;

  process(message: Message): StageWork {
    if (!(message instanceof ProgramMessage)) throw wrongMessage(this, message, "command lists");
    return this.run(message);
  }

  private *run(program: ProgramMessage): StageWork {
    const env = this.env;
    if (program.targetStartNs > env.now) yield env.timeout(program.targetStartNs - env.now);
    else if (program.report !== null && program.targetStartNs < env.now) this.lateStarts++;
    /** Async commands issued and not yet waited for, by position in the program. */
    const pending = new Map<number, Event<unknown>>();
    const source = program.commands;
    const list = isCommandList(source) ? source : null;
    for (let i = 0; ; i++) {
      let next: PeCommand | null | Event<PeCommand | null>;
      if (list !== null) next = i < list.length ? (list[i] as PeCommand) : null;
      else {
        next = (source as CommandSource).next();
        if (next instanceof Event) next = (yield next) as PeCommand | null;
      }
      if (next === null) break;
      const command = next;
      const where = () => `${peOf(this)} command ${program.name}#${i} (${command.kind})`;
      switch (command.kind) {
        case "delay":
          if (!(command.ns >= 0) || !Number.isFinite(command.ns)) {
            throw this.invalid(`${where()}: ns must be a finite number >= 0, got ${command.ns}.`);
          }
          if (command.ns > 0) yield env.timeout(command.ns);
          continue;
        case "cycles": {
          if (!(command.cycles >= 0) || !Number.isFinite(command.cycles)) {
            throw this.invalid(`${where()}: cycles must be a finite number >= 0, got ${command.cycles}.`);
          }
          const busy = command.cycles / this.params.freq_ghz;
          if (busy > 0) {
            yield env.timeout(busy);
            this.addBusy(busy);
          }
          continue;
        }
        case "wait":
          yield* this.waitFor(pending, command.commands, where);
          continue;
        case "ipcq_send": {
          // Blocks until a slot is free; the transfer runs on while the program goes on (the
          // program's end, and a `wait` without positions, wait for its arrival).
          const arrived = yield* this.ipcq.send(
            peOf(this),
            command.direction,
            command.src,
            command.bytes,
            command.data ?? null,
            this.ipcqConfig,
            where(),
          );
          pending.set(i, arrived);
          continue;
        }
        case "ipcq_recv": {
          if (command.direction === null) {
            throw this.invalid(
              `${where()}: ${this.impl} receives from a named direction only; pass the direction.`,
            );
          }
          const receive = this.receive(command, command.direction, where());
          if (command.async === true) pending.set(i, env.process(receive, `${peOf(this)} recv #${i}`));
          else yield* receive;
          continue;
        }
      }
      if (this.params.dispatch_ns > 0) {
        yield env.timeout(this.params.dispatch_ns);
        this.addBusy(this.params.dispatch_ns);
      }
      const done = env.event();
      const put = this.scheduler.enqueue(new Submission(`${program.name}#${i}`, command, done));
      if (put !== null) yield put;
      if (command.async === true) pending.set(i, done);
      else yield done;
    }
    if (pending.size > 0) yield env.allOf(pending.values());
    this.ipcq.releaseAll(peOf(this));
    program.done.succeed(env.now);
    if (program.report !== null) {
      this.machine.fabric.send(
        this.id,
        program.report.mCpu,
        new ControlMessage("pe_done", program.report.key, null),
        CONTROL_BYTES,
      );
    }
  }

  /** An IPCQ receive; tells the command which slot it got. */
  private *receive(command: IpcqRecvCommand, direction: string, where: string): StageWork {
    const payload = yield* this.ipcq.recv(
      peOf(this),
      direction,
      command.bytes,
      command.mode === "copy_to_dst" ? command.dst : null,
      command.consume,
      this.ipcqConfig,
      where,
    );
    command.onReceived?.(payload.slot, payload.hasData);
  }

  /** `wait`: for the async commands at `positions`, or all of them. */
  private *waitFor(
    pending: Map<number, Event<unknown>>,
    positions: readonly number[] | undefined,
    where: () => string,
  ): StageWork {
    if (positions === undefined) {
      if (pending.size > 0) yield this.env.allOf(pending.values());
      pending.clear();
      return;
    }
    const events: Event<unknown>[] = [];
    for (const position of positions) {
      const event = pending.get(position);
      if (event === undefined) {
        throw this.invalid(
          `${where()}: command #${position} is not an async command that is still outstanding (issued async and not waited for yet).`,
        );
      }
      events.push(event);
      pending.delete(position);
    }
    if (events.length === 1) yield events[0] as Event<unknown>;
    else if (events.length > 1) yield this.env.allOf(events);
  }

  private invalid(message: string): KbError {
    return new KbError("MACHINE_INVALID_COMMAND", message, {
      context: { nodeId: this.id, simTimeNs: this.env.now },
    });
  }
}

function isCommandList(program: PeProgram): program is readonly PeCommand[] {
  return Array.isArray(program);
}

export const peCpuV1 = defineComponent({
  kind: "pe_cpu",
  impl: "pe_cpu_v1",
  analytic: true,
  description:
    "PE control processor: runs a program (a command list, or a kernel through @kb/tl's KernelRunner) from the launch's global start time, issuing each command to PE_SCHEDULER after dispatch_ns and waiting for it unless async; cycles commands keep it busy at freq_ghz; services IPCQ send/recv over per-direction slot queues with credits.",
  params: peCpuParams,
  create: (context, params) => new PeCpuV1(context, params),
});
