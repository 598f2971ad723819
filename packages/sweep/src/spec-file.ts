import { readFileSync } from "node:fs";
import { dirname, isAbsolute, resolve } from "node:path";
import { KbError } from "@kb/errors";
import { parseDocument } from "yaml";
import { parseSweepSpec, type SweepSpec } from "./spec.js";

/** Reads and validates a sweep spec file (see {@link parseSweepSpec}); `SWEEP_INVALID` when unreadable. */
export function loadSweepSpec(file: string): SweepSpec {
  return parseSweepSpec(readText(file, "sweep spec"), file);
}

/**
 * A topology file as written (its YAML object, not validated: a sweep writes its axes into it
 * before the run validates it), with its relative plug-in paths made absolute, so the point's
 * copy, written elsewhere, loads the same plug-ins.
 */
export function readTopologyInput(file: string): Record<string, unknown> {
  const document = parseDocument(readText(file, "topology"));
  if (document.errors.length > 0) {
    throw new KbError("SWEEP_INVALID", `${file}: not valid YAML: ${document.errors[0]?.message}`, {
      context: { file },
    });
  }
  const topology = document.toJS() as unknown;
  if (topology === null || typeof topology !== "object" || Array.isArray(topology)) {
    throw new KbError("SWEEP_INVALID", `${file}: a topology file holds a mapping (name:, cube:, ...).`, {
      context: { file },
    });
  }
  const input = topology as Record<string, unknown>;
  if (Array.isArray(input.plugins)) {
    input.plugins = input.plugins.map((plugin) =>
      typeof plugin === "string" && isPath(plugin) && !isAbsolute(plugin)
        ? resolve(dirname(file), plugin)
        : plugin,
    );
  }
  return input;
}

/** A plug-in given by path rather than by package name (`./my-hbm`, `../x.ts`). */
export function isPath(plugin: string): boolean {
  return plugin.startsWith("./") || plugin.startsWith("../") || isAbsolute(plugin);
}

function readText(file: string, what: string): string {
  try {
    return readFileSync(file, "utf8");
  } catch (error) {
    throw new KbError("SWEEP_INVALID", `cannot read the ${what} file ${file}: ${(error as Error).message}`, {
      context: { file },
      cause: error,
    });
  }
}
