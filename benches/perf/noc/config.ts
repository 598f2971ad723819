// The config and reference files of `pnpm bench:noc` (../shared/fidelity/noc/README.md).
import { readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import * as z from "zod";
import { findUp } from "../hbm/trace.js";
import type { NocPoint } from "./judge.js";
import { parseMesh } from "./mesh.js";

const runSchema = z.strictObject({
  mesh: z.string().refine((text) => parseMesh(text) !== undefined, 'a mesh is "RxC", e.g. "8x8"'),
  routing: z.enum(["dor-xy", "dor-yx", "shortest"]),
  traffic: z.string(),
  packet_flits: z.number().int().min(1),
  offered: z.array(z.number().gt(0).max(1)).min(1),
  warmup_cycles: z.number().int().min(0),
  measure_cycles: z.number().int().min(1),
  seed: z.number().int().min(0),
});

/** One run of a config: a series of offered rates on one (mesh, routing, traffic, packet size). */
export type NocRun = z.output<typeof runSchema>;

const configSchema = z.strictObject({ runs: z.array(runSchema).min(1) });

/** A config file that cannot be read or does not match the schema (a user error: exit 2). */
export class ConfigError extends Error {}

/** Reads and checks a config file. */
export function loadConfig(file: string): NocRun[] {
  let data: unknown;
  try {
    data = JSON.parse(readFileSync(file, "utf8"));
  } catch (error) {
    throw new ConfigError(`cannot read ${file} as JSON: ${(error as Error).message}`);
  }
  const parsed = configSchema.safeParse(data);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new ConfigError(`${file}: ${issue?.path.join(".") || "(root)"}: ${issue?.message}`);
  }
  return parsed.data.runs;
}

/** The shared NOC fidelity folder (`$KB_NOC_FIDELITY_DIR`, else shared/fidelity/noc found walking up). */
export function nocFidelityDir(): string | undefined {
  const given = process.env.KB_NOC_FIDELITY_DIR;
  if (given !== undefined && given !== "") return resolve(given);
  const found = findUp(
    dirname(fileURLToPath(import.meta.url)),
    "shared",
    "fidelity",
    "noc",
    "reference.json",
  );
  return found === undefined ? undefined : dirname(found);
}

/** The reference's points (empty when there is no reference folder). */
export function loadReference(dir: string | undefined): NocPoint[] {
  if (dir === undefined) return [];
  const data = JSON.parse(readFileSync(join(dir, "reference.json"), "utf8")) as { points: NocPoint[] };
  return data.points;
}
