import { KbError } from "@kb/errors";
import type * as z from "zod";
import { checkEnergyTable, type EnergyTable } from "./energy.js";
import type { ModelStatInfo } from "./model-stats.js";

/**
 * The version of the timing-model contracts a definition was written for. `defineMemoryModel`,
 * `defineStageEngine` and `defineForwardingModel` stamp it on what they return; a kb that reads
 * another version refuses the plug-in with a message saying which (instead of calling a model the
 * way it was not written for).
 */
export const SPEC_VERSION = 1;

/** The type of {@link SPEC_VERSION}. */
export type SpecVersion = typeof SPEC_VERSION;

/**
 * An event of the simulation as a model sees it: what `env.timeout(ns, value)` returns. The
 * callback runs when simulated time reaches the event; `value` is what was passed to `timeout`.
 * The engine's `Event` (@kb/des) has these members.
 */
export interface SimEvent<T = unknown> {
  /** The value the event carries (`env.timeout(ns, value)`'s `value`). */
  readonly value: T;
  /** Runs `callback` when the event is processed, at its simulated time. */
  addCallback(callback: (event: SimEvent<T>) => void): void;
}

/**
 * The simulation's clock as a model sees it: the current time and a timer. The engine's
 * `Environment` (@kb/des) has these members, so a model needs no engine of its own.
 */
export interface SimEnvironment {
  /** The current simulated time, ns. */
  readonly now: number;
  /** An event `delay` ns from now (>= 0) carrying `value`: `env.timeout(5, port).addCallback(...)`. */
  timeout<T = undefined>(delay: number, value?: T): SimEvent<T>;
}

/**
 * The best rate a model can sustain, for rooflines (a run is compared against the peaks of the
 * hardware it used). A model that does not know leaves it empty.
 */
export interface ComponentPeak {
  /** Arithmetic operations per ns at best (GFLOP/s). */
  readonly flopsPerNs?: number;
  /** Bytes per ns at best (GB/s). */
  readonly bytesPerNs?: number;
}

/** What every timing-model definition states besides its contract's own members. */
export interface ModelDefinitionBase<S extends z.ZodType = z.ZodType> {
  /** The topology node kind it times (`"hbm_ctrl"`, `"pe_gemm"`, `"noc_router"`, ...). */
  readonly kind: string;
  /** Further kinds it may also time (forwarding models only: `transit_v1` times four). */
  readonly alsoKinds?: readonly string[];
  /** Implementation name, snake_case (`"closed_page_hbm"`); unique per registry. */
  readonly impl: string;
  /** What it models and its timing formula in words, a sentence or two (shown by `kb components list`). */
  readonly description: string;
  /** The params schema (zod, strict: an unknown key in a topology is an error; defaults documented with `.describe`). */
  readonly params: S;
  /**
   * True when the uncontended timing is exactly the documented formula (docs/latency-model.md),
   * so `kb probe` holds it to within 1% of that formula. Default false: the probe then checks only
   * that it is never faster than the formula.
   */
  readonly analytic?: boolean;
  /**
   * The counters the model's `stats()` publishes (name, unit and sentence), for
   * `kb components list`. Optional: a model may publish counters it does not declare.
   */
  readonly counters?: readonly ModelStatInfo[];
  /**
   * What the model's actions cost in energy and what it draws at rest (docs/energy.md): each cost
   * charged on one of its counters or a framework measure. Optional: without one the framework
   * uses the built-in table of the kind (`kb components list` says which).
   */
  readonly energy?: EnergyTable;
}

/** The contract tag and version a `define*Model` function stamps on a definition. */
export interface ContractStamp<C extends string> {
  /** Which contract the definition follows (the framework adapts it by this). */
  readonly contract: C;
  /** The contracts' version it was written for ({@link SPEC_VERSION}). */
  readonly specVersion: SpecVersion;
}

const NAME = /^[a-z][a-z0-9_]*$/;

/**
 * A function that throws `COMPONENT_INVALID_DEFINITION` prefixed with `where`
 * (`defineMemoryModel("closed_page_hbm")`), the located message every definition check uses.
 * @internal
 */
export function definitionFailure(where: string): (what: string) => never {
  return (what) => {
    throw new KbError("COMPONENT_INVALID_DEFINITION", `${where}: ${what}`);
  };
}

/** `defineMemoryModel("impl")`: where a message about `definition` points. @internal */
export function definitionWhere(fn: string, definition: unknown): string {
  const impl = (definition as { impl?: unknown } | null)?.impl;
  return `${fn}(${JSON.stringify(impl ?? "?")})`;
}

/**
 * Checks the members every definition has ({@link ModelDefinitionBase}): an object, a snake_case
 * kind (and `alsoKinds`) and impl, a description, a zod params schema, `analytic` a boolean and
 * `counters` a list of `{ name, unit, description }` with unique snake_case names, `energy` a
 * table {@link checkEnergyTable} accepts. Throws
 * `COMPONENT_INVALID_DEFINITION` prefixed with `where` otherwise. Used by every `define*`
 * function, and by `@kb/components`' `defineComponent`.
 */
export function checkDefinitionBase(definition: unknown, where: string): void {
  const fail = definitionFailure(where);
  if (definition === null || typeof definition !== "object") fail("expects an object.");
  const d = definition as Partial<ModelDefinitionBase>;
  for (const kind of [d.kind, ...(d.alsoKinds ?? [])]) {
    if (typeof kind !== "string" || !NAME.test(kind)) {
      fail(`kind must be a snake_case name such as "pe_gemm", got ${JSON.stringify(kind)}.`);
    }
  }
  if (typeof d.impl !== "string" || !NAME.test(d.impl)) {
    fail(`impl must be a snake_case name such as "pe_gemm_v2", got ${JSON.stringify(d.impl)}.`);
  }
  if (typeof d.description !== "string" || d.description.trim() === "") {
    fail("description must say what the impl models (shown by `kb components list`).");
  }
  const params = d.params as unknown as { safeParse?: unknown } | undefined;
  if (params === undefined || params === null || typeof params.safeParse !== "function") {
    fail("params must be a zod schema (z.strictObject({...})).");
  }
  if (d.analytic !== undefined && typeof d.analytic !== "boolean") {
    fail(`analytic must be true, false or left out, got ${JSON.stringify(d.analytic)}.`);
  }
  if (d.counters !== undefined) checkCounters(d.counters, fail);
  if (d.energy !== undefined) checkEnergyTable(d.energy, fail);
}

function checkCounters(counters: unknown, fail: (what: string) => never): void {
  if (!Array.isArray(counters)) fail("counters must be an array of { name, unit, description }.");
  const seen = new Set<string>();
  for (const counter of counters as unknown[]) {
    const { name, unit, description } = (counter ?? {}) as Partial<ModelStatInfo>;
    if (typeof name !== "string" || !NAME.test(name) || seen.has(name)) {
      fail(`counters: each needs a snake_case name unique in the impl, got ${JSON.stringify(name)}.`);
    }
    if (typeof unit !== "string" || unit === "" || typeof description !== "string" || description === "") {
      fail(`counters: "${name}" needs a unit ("count", "ns", "bytes") and a description.`);
    }
    seen.add(name as string);
  }
}

/**
 * A checked definition as plain data: a frozen copy of `definition` with its contract and
 * {@link SPEC_VERSION}. @internal
 */
export function stamp<D extends object, C extends string>(definition: D, contract: C): D & ContractStamp<C> {
  return Object.freeze({ ...definition, contract, specVersion: SPEC_VERSION });
}
