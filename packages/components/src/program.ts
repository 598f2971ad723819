import type { Event } from "@kb/des";
import type { PeCommand } from "./commands.js";
import { Message } from "./message.js";

/** Where a launched PE reports completion. @internal */
export interface LaunchReport {
  /** The M_CPU that fanned the launch out. */
  readonly mCpu: string;
  /** Key of the launch at that M_CPU. */
  readonly key: string;
}

/** A command list for a PE_CPU (from `Machine.submit` or a launch). @internal */
export class ProgramMessage extends Message {
  constructor(
    readonly name: string,
    readonly commands: readonly PeCommand[],
    /** Global start barrier: the PE starts no earlier than this (ns). */
    readonly targetStartNs: number,
    readonly done: Event<unknown>,
    readonly report: LaunchReport | null,
  ) {
    super();
  }

  get label(): string {
    return this.name;
  }

  forward(): null {
    return null;
  }
}

/** A command as the PE_SCHEDULER receives it from its PE_CPU (ADR-0021 `PeInternalTxn`). @internal */
export class Submission extends Message {
  constructor(
    readonly id: string,
    readonly command: PeCommand,
    /** Succeeds when the command completed (published by the scheduler). */
    readonly done: Event<unknown>,
  ) {
    super();
  }

  get label(): string {
    return `${this.command.kind} ${this.id}`;
  }

  forward(): null {
    return null;
  }
}

/** A control message (launch fan-out, completion) with a kind and a key. @internal */
export class ControlMessage extends Message {
  constructor(
    readonly action: "cube_launch" | "pe_done" | "cube_done" | "sip_launch",
    readonly key: string,
    readonly payload: unknown,
  ) {
    super();
  }

  get label(): string {
    return `${this.action} ${this.key}`;
  }

  forward(): null {
    return null;
  }
}
