import type { Event } from "@kb/des";
import type { PeCommand } from "@kb/spec";
import { Message } from "./message.js";

/**
 * A program whose commands are decided one at a time (a kernel running on the PE, `@kb/tl`'s
 * `KernelRunner`). The PE_CPU calls `next()` when it is ready for the next command: at the start,
 * after a synchronous command completed, and right after an async command was handed to the
 * scheduler. It returns the command, `null` when the program has ended, or an event that succeeds
 * with either once the source has decided (fails to abort the program with an error).
 */
export interface CommandSource {
  /** For messages (a kernel's name). */
  readonly name: string;
  next(): PeCommand | null | Event<PeCommand | null>;
}

/** What a PE runs: a fixed command list, or a source deciding as it goes. */
export type PeProgram = readonly PeCommand[] | CommandSource;

/** Where a launched PE reports completion. */
export interface LaunchReport {
  /** The M_CPU that fanned the launch out. */
  readonly mCpu: string;
  /** Key of the launch at that M_CPU. */
  readonly key: string;
}

/** A command list for a PE_CPU (from `Machine.submit` or a launch). */
export class ProgramMessage extends Message {
  constructor(
    readonly name: string,
    readonly commands: PeProgram,
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

/** A command as the PE_SCHEDULER receives it from its PE_CPU (ADR-0021 `PeInternalTxn`). */
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

/** A control message (launch fan-out, completion) with a kind and a key. */
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
