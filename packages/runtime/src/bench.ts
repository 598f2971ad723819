import { closest, formatIssuePath, formatSchemaIssues, KbError } from "@kb/errors";
import type { Tensor } from "@kb/tensor";
import { isPrototypeKey, prototypeKeyMessage, prototypeKeyPath } from "@kb/topology";
import type * as z from "zod";
import type { CheckTolerance } from "./check-tolerance.js";
import type { DeviceTensor } from "./device-tensor.js";
import type { ReferenceContext } from "./reference-progress.js";
import type { Simulator } from "./simulator.js";

/** An output of a bench and how to compute what it should hold. */
export interface BenchCheck {
  /** The device tensor the kernel wrote. */
  readonly actual: DeviceTensor;
  /**
   * The expected values, computed on the host by a separate plain implementation. It may report
   * how far it got through `context?.progress(fraction)` (`kb run --verify` shows it with an
   * ETA); `context` is absent when nobody listens (see {@link withReferenceProgress}).
   */
  readonly reference: (context?: ReferenceContext) => Tensor | Promise<Tensor>;
  /**
   * This output's own tolerance, `{ rtol?, atol?, norm? }`: the fields given replace its dtype's
   * default (`TOLERANCES` of `@kb/data-executor`), e.g. `{ rtol: 1e-2, atol: 1e-5 }` for an f16
   * output whose values are much smaller than 1, or `{ rtol: 2e-3, atol: 0, norm:
   * "relative-to-max" }` to scale by the reference's largest magnitude. A bad value is a located
   * `RUNTIME_INVALID` when the bench returns. See docs/verification.md.
   */
  readonly tolerance?: CheckTolerance;
}

/** What a bench's `run` returns: the outputs `--verify` checks. */
export interface BenchOutcome {
  readonly check?: Readonly<Record<string, BenchCheck>>;
  /** A table of the bench's own (an nccl-tests-style sweep): `kb run` prints it and puts it in the JSON. */
  readonly report?: BenchReport;
  /**
   * The tokens the run processed (an LLM bench: batch x prompt length for a prefill, batch x
   * steps for a decode), for the energy's J per token; leave it out when tokens mean nothing.
   */
  readonly tokens?: number;
}

/** A bench's own table: column names and rows of cells (numbers print as given). */
export interface BenchReport {
  readonly title: string;
  readonly columns: readonly string[];
  readonly rows: readonly (readonly (string | number)[])[];
  /** Figures over simulated time (a serving loop's KV-cache occupancy): `kb web` charts them. */
  readonly series?: readonly BenchSeries[];
}

/** One figure over simulated time: `y[i]` from `x[i]` (ns) on, until the next point. */
export interface BenchSeries {
  readonly name: string;
  /** What `y` counts: `% of blocks`, `sequences`. */
  readonly unit: string;
  /** Simulated times, ns, ascending. */
  readonly x: readonly number[];
  readonly y: readonly number[];
}

/** A workload: a host program with typed params. */
export interface Bench<S extends z.ZodType = z.ZodType> {
  readonly name: string;
  readonly description?: string;
  /** Params schema (with defaults): `kb run NAME --param k=v` are validated by it. */
  readonly params: S;
  /** Runner mode only (the kernel branches on loaded data). */
  readonly runnerOnly?: boolean;
  run(sim: Simulator, params: z.output<S>): Promise<BenchOutcome | undefined> | Promise<void>;
}

/** Declares a bench (DESIGN §6); `export default defineBench({...})` in a bench file. */
export function defineBench<S extends z.ZodType>(bench: Bench<S>): Bench<S> {
  if (typeof bench?.name !== "string" || bench.name.length === 0) {
    throw new KbError("RUNTIME_INVALID", "defineBench: needs a non-empty name.");
  }
  if (typeof bench.run !== "function") {
    throw new KbError(
      "RUNTIME_INVALID",
      `defineBench "${bench.name}": run must be an async function (sim, params).`,
    );
  }
  if (
    bench.params === undefined ||
    typeof (bench.params as { safeParse?: unknown }).safeParse !== "function"
  ) {
    throw new KbError("RUNTIME_INVALID", `defineBench "${bench.name}": params must be a zod schema.`);
  }
  return Object.freeze({ ...bench });
}

/** True for a value made by {@link defineBench} (or shaped like one). */
export function isBench(value: unknown): value is Bench {
  const bench = value as Bench | null;
  return (
    typeof bench === "object" &&
    bench !== null &&
    typeof bench.name === "string" &&
    typeof bench.run === "function" &&
    typeof (bench.params as { safeParse?: unknown } | undefined)?.safeParse === "function"
  );
}

/** `MM: not a param of this bench (did you mean M?)`: the nearest param name when one is close. */
function unknownParamText(key: string, params: readonly string[]): string {
  const near = closest(key, params);
  return `${key}: not a param of this bench${near === undefined ? "" : ` (did you mean ${near}?)`}`;
}

/**
 * Validates `key=value` params (values as the command line gives them: JSON where it parses,
 * else the string) with the bench's schema. Unknown keys and bad values are `RUNTIME_INVALID`
 * errors that list the bench's params; so is a prototype key (`__proto__`, `constructor`,
 * `prototype`) as a name or inside a JSON value.
 */
export function parseBenchParams<S extends z.ZodType>(
  bench: Bench<S>,
  raw: Readonly<Record<string, string | number | boolean>>,
): z.output<S> {
  const refused = Object.keys(raw).find(isPrototypeKey);
  if (refused !== undefined) {
    throw new KbError(
      "RUNTIME_INVALID",
      `bench "${bench.name}": bad params:\n  ${refused}: ${prototypeKeyMessage(refused)}`,
    );
  }
  const shape = (bench.params as unknown as { shape?: Record<string, unknown> }).shape;
  if (shape !== undefined && typeof shape === "object") {
    const unknown = Object.keys(raw).filter((key) => !Object.hasOwn(shape, key));
    if (unknown.length > 0) {
      throw new KbError(
        "RUNTIME_INVALID",
        `bench "${bench.name}": bad params:\n  ${unknown.map((key) => unknownParamText(key, Object.keys(shape))).join("\n  ")}\nIts params: ${describeParams(bench)}.`,
      );
    }
  }
  const values: Record<string, unknown> = Object.create(null);
  for (const [key, value] of Object.entries(raw)) {
    if (typeof value !== "string") {
      values[key] = value;
      continue;
    }
    try {
      values[key] = JSON.parse(value);
    } catch {
      values[key] = value;
    }
    // A JSON value is data too: `{"__proto__": ...}` in it is refused like a param name.
    const inner = prototypeKeyPath(values[key]);
    if (inner !== undefined) {
      const field = String(inner[inner.length - 1]);
      throw new KbError(
        "RUNTIME_INVALID",
        `bench "${bench.name}": bad params:\n  ${formatIssuePath([key, ...inner])}: ${prototypeKeyMessage(field)}`,
      );
    }
  }
  const parsed = bench.params.safeParse(values);
  if (!parsed.success) {
    const issues = formatSchemaIssues(parsed.error.issues, { root: "(params)" });
    throw new KbError(
      "RUNTIME_INVALID",
      `bench "${bench.name}": bad params:\n  ${issues.join("\n  ")}\nIts params: ${describeParams(bench)}.`,
    );
  }
  return parsed.data as z.output<S>;
}

/** `M (default 1024), dtype (default "f16")`, from the schema's defaults. */
export function describeParams(bench: Bench): string {
  const shape = (bench.params as unknown as { shape?: Record<string, z.ZodType> }).shape;
  if (shape === undefined) return "(not an object schema)";
  const defaults = bench.params.safeParse({});
  return Object.keys(shape)
    .map((key) => {
      const value = defaults.success ? (defaults.data as Record<string, unknown>)[key] : undefined;
      return value === undefined ? key : `${key} (default ${JSON.stringify(value)})`;
    })
    .join(", ");
}
