/**
 * The control traffic of a launch (DESIGN §2), shared by `Machine.launch` and the host-side and
 * PE_CPU impls: the size of a control message on the fabric and what a SIP's IO_CPU receives.
 */

import type { PeProgram } from "./program.js";
import type { Transfer } from "./transfer.js";

/** Bytes of a launch or completion descriptor on the fabric. */
export const CONTROL_BYTES = 64;

/** The launch of a program on one SIP, as it arrives at the SIP's IO_CPU. */
export interface SipLaunch {
  readonly cubes: ReadonlyMap<number, readonly { pe: string; commands: PeProgram }[]>;
  /** Reports the SIP's completion (a packet IO_CPU -> host). */
  readonly transfer: Transfer;
}
