import { KbError } from "@kb/errors";
import { canonicalJson, sha256Hex } from "@kb/runtime";
import { isPrototypeKey, prototypeKeyMessage } from "@kb/topology";
import { type Constraint, parseConstraint } from "./constraint.js";
import { type AxisValues, designPoints } from "./designs.js";
import { targetPathFields } from "./field-paths.js";
import type { SweepSpec } from "./spec.js";

/** What one point runs: the base run with the point's axis values written in. */
export interface PointInputs {
  /** The topology as written (a YAML file's object, not yet validated) with the point's changes. */
  readonly topology: Record<string, unknown>;
  /** Bench params: the spec's, then the point's. */
  readonly params: Record<string, unknown>;
  /** Plug-ins: the spec's, then the point's. */
  readonly plugins: readonly string[];
}

/** A point of a sweep. */
export interface SweepPoint {
  /** Its position in the design (0-based; points skipped by constraints keep theirs unused). */
  readonly index: number;
  /** The axis values, by axis name. */
  readonly values: AxisValues;
  readonly inputs: PointInputs;
}

/** A point a constraint ruled out. */
export interface SkippedPoint {
  readonly index: number;
  readonly values: AxisValues;
  /** The first constraint it failed. */
  readonly constraint: string;
}

/** The points a spec runs. */
export interface SweepPlan {
  readonly points: readonly SweepPoint[];
  readonly skipped: readonly SkippedPoint[];
  /** Points a random or Latin-hypercube design drew twice (run once). */
  readonly duplicates: number;
}

/**
 * Expands a spec's design over a base topology object (the parsed YAML of the spec's topology):
 * the design's points in order, duplicates dropped (a random design may draw a point twice),
 * each written into the base run and checked against the constraints. A constraint sees the axis
 * names, `params` (after the point's values) and `topology` (as written, after them).
 */
export function planSweep(spec: SweepSpec, baseTopology: Readonly<Record<string, unknown>>): SweepPlan {
  const constraints: Constraint[] = spec.constraints.map((source) => parseConstraint(source));
  const points: SweepPoint[] = [];
  const skipped: SkippedPoint[] = [];
  const seen = new Set<string>();
  let duplicates = 0;
  for (const [index, values] of designPoints(spec.axes, spec.design).entries()) {
    const identity = canonicalJson(values);
    if (seen.has(identity)) {
      duplicates++;
      continue;
    }
    seen.add(identity);
    const inputs = pointInputs(spec, baseTopology, values);
    const scope = { ...values, params: inputs.params, topology: inputs.topology };
    const failed = constraints.find((constraint) => !constraint.evaluate(scope));
    if (failed !== undefined) skipped.push({ index, values, constraint: failed.source });
    else points.push({ index, values, inputs });
  }
  return { points, skipped, duplicates };
}

/** The base run with `values` written in at each axis's paths. */
export function pointInputs(
  spec: SweepSpec,
  baseTopology: Readonly<Record<string, unknown>>,
  values: AxisValues,
): PointInputs {
  const topology = structuredClone(baseTopology) as Record<string, unknown>;
  const params = structuredClone(spec.params);
  const plugins = [...spec.plugins];
  const write = (path: string, value: unknown, where: string) => {
    const part = structuredClone(value);
    if (path === "plugins") {
      if (part !== null) plugins.push(...(Array.isArray(part) ? part.map(String) : [String(part)]));
    } else if (path === "topology.overrides[]") {
      if (part !== null) {
        const overrides = Array.isArray(topology.overrides) ? topology.overrides : [];
        topology.overrides = [...overrides, ...(Array.isArray(part) ? part : [part])];
      }
    } else {
      const [root, ...rest] = targetPathFields(path);
      setPath(root === "topology" ? topology : params, rest, part, where);
    }
  };
  for (const [path, value] of Object.entries(spec.set)) write(path, value, `set: ${path}`);
  for (const [name, axis] of Object.entries(spec.axes)) {
    const paths = Array.isArray(axis.path) ? axis.path : [axis.path];
    const value = values[name];
    const parts = paths.length === 1 ? [value] : (value as readonly unknown[]);
    for (const [slot, path] of paths.entries()) write(path, parts[slot], `axes.${name}: ${path}`);
  }
  return { topology, params, plugins };
}

/**
 * Writes `value` at `path` under `target`, creating null-prototype objects on the way and
 * following own fields only. A prototype key (`__proto__`, ...) anywhere in the path is a
 * `SWEEP_INVALID` error naming `where`: the spec parser refuses one, a spec built in code too.
 */
function setPath(
  target: Record<string, unknown>,
  path: readonly string[],
  value: unknown,
  where: string,
): void {
  const refused = path.find(isPrototypeKey);
  if (refused !== undefined) throw new KbError("SWEEP_INVALID", `${where}: ${prototypeKeyMessage(refused)}`);
  let node: Record<string, unknown> = target;
  for (const [depth, key] of path.entries()) {
    if (depth === path.length - 1) {
      node[key] = value;
      return;
    }
    const next = Object.hasOwn(node, key) ? node[key] : undefined;
    if (next === undefined || next === null) node[key] = Object.create(null);
    else if (typeof next !== "object") {
      throw new KbError(
        "SWEEP_INVALID",
        `${where}: ${path.slice(0, depth + 1).join(".")} is ${JSON.stringify(next)}, not an object, so ${key} has no field ${path[depth + 1]}.`,
      );
    }
    node = node[key] as Record<string, unknown>;
  }
}

/**
 * A point's key: the sha256 of the canonical JSON of its bench's digest (the bench file and the
 * files it imports), its inputs and the digests of its plug-ins' code (`code`: entry -> digest,
 * left out of the key when empty). A sweep that is run again finds its finished points by key:
 * the same bench files, topology, params and plug-in code give the same key whatever the design
 * that produced the point; an edited plug-in or imported file gives a new one.
 */
export function pointKey(
  benchDigest: string,
  inputs: PointInputs,
  code: Readonly<Record<string, string | null>> = {},
): Promise<string> {
  const plugins = Object.keys(code).length > 0 ? { code } : {};
  return sha256Hex(canonicalJson({ bench: benchDigest, ...inputs, ...plugins }));
}
