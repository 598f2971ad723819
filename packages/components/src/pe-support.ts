import { Resource } from "@kb/des";
import { KbError } from "@kb/errors";
import * as z from "zod";
import type { Component, StageWork } from "./component.js";
import type { Message } from "./message.js";

/** The error of an engine handed a message it does not service (a wiring bug, not a user error). */
export function wrongMessage(component: Component, message: Message, expected: string): KbError {
  return new KbError(
    "MACHINE_INVARIANT",
    `${component.kind} ${component.impl} received "${message.label}"; it services ${expected}.`,
    { context: { nodeId: component.id, simTimeNs: component.env.now } },
  );
}

/** The PE id (`sip0.cube0.pe3`) of a PE component. */
export function peOf(component: Component): string {
  return component.node.parent as string;
}

/**
 * The compute slot (capacity 1) that the GEMM and MATH engines of `component`'s PE share
 * (ADR-0014 D4: GEMM and MATH never overlap within a PE); created on first use. Plug-in engines
 * use it with {@link compute} to keep that rule.
 */
export function computeSlotOf(component: Component): Resource {
  return component.machine.shared(
    `${peOf(component)}:accel`,
    () => new Resource(component.env, { capacity: 1 }),
  );
}

/** Runs `time` ns on the PE's shared compute slot (see {@link computeSlotOf}). */
export function* compute(component: Component, slot: Resource, time: number): StageWork {
  const request = slot.request();
  yield request;
  if (time > 0) yield component.env.timeout(time);
  slot.release(request);
}

/** A duration param in ns for a params schema: a number >= 0 with a default and a description. */
export const ns = (description: string, value: number) =>
  z.number().min(0).default(value).describe(description);
