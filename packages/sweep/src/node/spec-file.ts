import { dirname, isAbsolute, resolve } from "node:path";
import { KbError } from "@kb/errors";
import { readUserText } from "@kb/errors/node";
import { TOPOLOGY_FILE_MAX_BYTES } from "@kb/topology/node";
import { parseDocument } from "yaml";
import { parseSweepSpec, type SweepSpec } from "../spec.js";

/** The largest sweep spec file read: 4 MiB (the shipped specs are about 1 KB). */
export const SWEEP_SPEC_MAX_BYTES = 4 * 2 ** 20;

/**
 * Reads and validates a sweep spec file (see {@link parseSweepSpec}); `SWEEP_INVALID` when it
 * cannot be read, is not a regular file or is above {@link SWEEP_SPEC_MAX_BYTES}.
 */
export function loadSweepSpec(file: string): SweepSpec {
  return parseSweepSpec(readText(file, "sweep spec file", SWEEP_SPEC_MAX_BYTES), file);
}

/**
 * A topology file as written (its YAML object, not validated: a sweep writes its axes into it
 * before the run validates it), with its relative plug-in paths made absolute, so the point's
 * copy, written elsewhere, loads the same plug-ins.
 */
export function readTopologyInput(file: string): Record<string, unknown> {
  const document = parseDocument(readText(file, "topology file", TOPOLOGY_FILE_MAX_BYTES));
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

function readText(file: string, what: string, maxBytes: number): string {
  return readUserText(file, { what, maxBytes, code: "SWEEP_INVALID" });
}
