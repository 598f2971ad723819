import { formatSchemaIssues, KbError } from "@kb/errors";
import { Xoshiro128StarStar } from "@kb/tensor";
import * as z from "zod";
import type { ServeRequest } from "./scheduler.js";

/** One line of a trace file: a JSON object. */
export const TraceLineSchema = z.strictObject({
  arrival_ns: z.number().nonnegative().describe("When the request arrives, ns from the trace's start."),
  prompt_tokens: z.number().int().positive().describe("Tokens of its prompt."),
  output_tokens: z.number().int().positive().describe("Tokens it generates (the first from the prefill)."),
});

/**
 * The requests of a trace file's text: one JSON object per line (`{"arrival_ns": 0,
 * "prompt_tokens": 64, "output_tokens": 16}`), blank lines skipped, in any order of arrival (the
 * scheduler orders them; equal arrivals keep the file's order). A line that is not JSON or not
 * such an object is a `RUNTIME_INVALID` naming `file:line` and the field; an empty trace too.
 */
export function parseTrace(text: string, file: string): ServeRequest[] {
  const requests: ServeRequest[] = [];
  const lines = text.split(/\r?\n/);
  for (const [index, line] of lines.entries()) {
    if (line.trim() === "") continue;
    const context = { file, line: index + 1 };
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch (error) {
      throw new KbError(
        "RUNTIME_INVALID",
        `llama-serve trace: not JSON (${(error as Error).message}). Each line is one object: {"arrival_ns": 0, "prompt_tokens": 64, "output_tokens": 16}.`,
        { context },
      );
    }
    const parsed = TraceLineSchema.safeParse(value);
    if (!parsed.success) {
      throw new KbError(
        "RUNTIME_INVALID",
        `llama-serve trace: ${formatSchemaIssues(parsed.error.issues).join("; ")}. Each line is one object: {"arrival_ns": 0, "prompt_tokens": 64, "output_tokens": 16}.`,
        { context },
      );
    }
    requests.push({
      id: requests.length,
      arrivalNs: parsed.data.arrival_ns,
      promptTokens: parsed.data.prompt_tokens,
      outputTokens: parsed.data.output_tokens,
    });
  }
  if (requests.length === 0) {
    throw new KbError("RUNTIME_INVALID", "llama-serve trace: no requests (the file has no non-blank line).", {
      context: { file },
    });
  }
  return requests;
}

/** The seeded generator's parameters. */
export interface GeneratorOptions {
  readonly requests: number;
  /** Mean arrivals per second (Poisson process). */
  readonly rate: number;
  readonly seed: number;
  /** Prompt lengths, uniform integers in [min, max]. */
  readonly promptMin: number;
  readonly promptMax: number;
  /** Output lengths, uniform integers in [min, max]. */
  readonly outputMin: number;
  readonly outputMax: number;
}

/**
 * `requests` requests with Poisson arrivals at `rate` per second (exponential gaps of mean
 * `1e9 / rate` ns, `-ln(1 - u) x mean` with u uniform in [0, 1), rounded to whole ns; the first
 * request at 0) and prompt and output lengths uniform integers in their [min, max], drawn from
 * xoshiro128** seeded with `seed`: the same options give the same trace on every platform.
 */
export function generateTrace(options: GeneratorOptions): ServeRequest[] {
  const { promptMin, promptMax, outputMin, outputMax } = options;
  for (const [what, min, max] of [
    ["prompt", promptMin, promptMax],
    ["output", outputMin, outputMax],
  ] as const) {
    if (min > max) {
      throw new KbError(
        "RUNTIME_INVALID",
        `llama-serve: ${what}Min (${min}) is above ${what}Max (${max}): the ${what} lengths are drawn from [${what}Min, ${what}Max]. Raise ${what}Max or lower ${what}Min.`,
      );
    }
  }
  const random = new Xoshiro128StarStar(options.seed);
  const meanGapNs = 1e9 / options.rate;
  const requests: ServeRequest[] = [];
  let arrivalNs = 0;
  for (let id = 0; id < options.requests; id++) {
    if (id > 0) arrivalNs += Math.round(-Math.log(1 - random.nextUnit()) * meanGapNs);
    const promptTokens = promptMin + random.nextBelow(promptMax - promptMin + 1);
    const outputTokens = outputMin + random.nextBelow(outputMax - outputMin + 1);
    requests.push({ id, arrivalNs, promptTokens, outputTokens });
  }
  return requests;
}
