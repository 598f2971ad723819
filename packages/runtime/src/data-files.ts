import * as z from "zod";
import type { Bench } from "./bench.js";

// A bench param that names a data file the bench reads (a request trace, a table of shapes): its
// bytes are part of the run's identity, so `kb run --cache` and sweeps see an edited file. The mark
// is a global symbol on the schema, so a bench bundled with its own copy of @kb/runtime or zod
// still carries it.

const DATA_FILE = Symbol.for("kb.runtime.dataFileParam");

/**
 * A param naming a data file the bench reads, relative to the folder kb runs in: a non-empty
 * string whose file's sha256 goes in the run's manifest (`manifest.dataFiles`), so that a run
 * with an edited file is another run. `dataFileParam("A JSON-lines trace").optional()` for a
 * param that may be left out.
 */
export function dataFileParam(description: string): z.ZodString {
  const schema = z.string().min(1).describe(description);
  Object.defineProperty(schema, DATA_FILE, { value: true });
  return schema;
}

/** Whether `schema` (under optional / default / nullable wrappers) is a {@link dataFileParam}. */
function isDataFileSchema(schema: unknown): boolean {
  let at = schema as { _zod?: { def?: { innerType?: unknown } } } | undefined;
  for (let depth = 0; at !== undefined && depth < 8; depth++) {
    if (Object.hasOwn(at as object, DATA_FILE)) return true;
    at = at._zod?.def?.innerType as typeof at;
  }
  return false;
}

/** A data file a run reads: the param that names it and the path it was given. */
export interface DataFileParam {
  readonly param: string;
  readonly path: string;
}

/** The data files `params` (after defaults) name through the bench's {@link dataFileParam}s, by param name. */
export function dataFileParams(bench: Bench, params: Readonly<Record<string, unknown>>): DataFileParam[] {
  const shape = (bench.params as unknown as { shape?: Record<string, unknown> }).shape;
  if (shape === undefined) return [];
  return Object.keys(shape)
    .sort()
    .filter((param) => isDataFileSchema(shape[param]) && typeof params[param] === "string")
    .map((param) => ({ param, path: params[param] as string }));
}
