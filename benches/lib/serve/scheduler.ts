import { KbError } from "@kb/errors";

// The serving loop's scheduler: pure and deterministic (no clock, no randomness). Each step it
// chooses what runs (continuous batching with chunked prefill over a paged KV cache); the caller
// says how long the step took (the model's simulated time) and the scheduler advances.

/** One request of a trace. */
export interface ServeRequest {
  /** Its index in the trace (0-based), the tie-break between equal arrivals. */
  readonly id: number;
  /** When it arrives, ns from the trace's start. */
  readonly arrivalNs: number;
  readonly promptTokens: number;
  /** Tokens to generate (>= 1; the first comes from the prefill's last chunk). */
  readonly outputTokens: number;
}

/** The scheduler's limits. */
export interface SchedulerConfig {
  /** Tokens a step may compute: every decode (1 each) plus the prefill chunks admitted. */
  readonly maxBatchTokens: number;
  /** The largest prefill chunk of one request in one step (chunked prefill). */
  readonly chunk: number;
  /** Tokens per KV-cache block. */
  readonly blockTokens: number;
  /** Blocks of the KV cache (all sequences together). */
  readonly kvBlocks: number;
}

/** What one request computes in a step: `tokens` new positions from `pos0` on. */
export interface StepItem {
  readonly request: number;
  readonly kind: "prefill" | "decode";
  /** Positions already in the KV cache (the new tokens' first position). */
  readonly pos0: number;
  readonly tokens: number;
}

/** A step: its items (decodes first, then prefill chunks, in admission order) and the cache after allocation. */
export interface StepPlan {
  readonly index: number;
  readonly startNs: number;
  readonly items: readonly StepItem[];
  /** Blocks in use once this step's tokens have their slots. */
  readonly usedBlocks: number;
  /** Requests preempted (recompute) to make room in this step, newest first. */
  readonly preempted: readonly number[];
  /** Requests admitted (first scheduled, or again after a preemption) in this step. */
  readonly admitted: readonly number[];
}

/** A finished step: its plan, its end and the requests that finished in it. */
export interface StepRecord extends StepPlan {
  readonly endNs: number;
  readonly finished: readonly number[];
}

/** What happened to one request. */
export interface RequestRecord {
  readonly request: ServeRequest;
  /** End of the step that produced its first token. */
  readonly firstTokenNs: number;
  /** End of the step that produced its last token. */
  readonly finishNs: number;
  /** Times it was preempted. */
  readonly preemptions: number;
}

/** The whole run: the steps in order, each request's record (by id) and the preemptions. */
export interface ServeRun {
  readonly steps: readonly StepRecord[];
  readonly requests: readonly RequestRecord[];
  readonly preemptions: number;
}

/** How long a step takes: the model's time for its items (ns), from the simulator or a hand model. */
export type StepTime = (plan: StepPlan) => number | Promise<number>;

interface Sequence {
  readonly request: ServeRequest;
  /** Positions in the KV cache. */
  computed: number;
  /** Positions to compute before sampling: the prompt, plus the tokens generated before a preemption. */
  prefillTarget: number;
  /** Tokens generated so far. */
  generated: number;
  blocks: number;
  firstTokenNs: number | null;
  preemptions: number;
}

/** Blocks holding `positions` KV positions. */
export function blocksFor(positions: number, blockTokens: number): number {
  return Math.ceil(positions / blockTokens);
}

/**
 * Runs the requests to completion. Each step, at time `now`:
 * 1. Requests that arrived by `now` join the waiting queue (by arrival, then trace order); with
 *    nothing running or waiting, time jumps to the next arrival.
 * 2. The running sequences, in admission order, get their tokens while the step's budget
 *    (`maxBatchTokens`) lasts: a decoding sequence 1, a sequence in prefill its next chunk
 *    (`min(chunk, rest of its prefill, budget left)`). Each one's KV positions after the step must
 *    fit its blocks (`ceil(positions / blockTokens)`); when the cache has too few free blocks, the
 *    newest running sequence is preempted (vLLM's recompute preemption: its blocks are freed and it
 *    goes back to the head of the waiting queue, to prefill its prompt and the tokens it had
 *    generated again), until the blocks fit or the sequence itself was the newest (then it waits).
 * 3. Waiting requests are admitted in order (first come, first served: none skips the head) while
 *    budget remains and the cache has free blocks for their first chunk.
 * A step with no items cannot happen while something runs, since a lone sequence always fits an
 * empty cache (checked at the start: a request whose prompt and output exceed the cache is refused).
 * After the step (its time from `stepTime`), each item's tokens are in the cache; a prefill that
 * reaches its target, and every decode, produces one token; a request with all its tokens
 * finishes and frees its blocks. `onStep` hears of each step once it is done.
 */
export async function runScheduler(
  requests: readonly ServeRequest[],
  config: SchedulerConfig,
  stepTime: StepTime,
  onStep?: (step: StepRecord) => void,
): Promise<ServeRun> {
  checkConfig(requests, config);
  const order = [...requests].sort((a, b) => a.arrivalNs - b.arrivalNs || a.id - b.id);
  const sequences = new Map<number, Sequence>();
  for (const request of requests) {
    sequences.set(request.id, {
      request,
      computed: 0,
      prefillTarget: request.promptTokens,
      generated: 0,
      blocks: 0,
      firstTokenNs: null,
      preemptions: 0,
    });
  }
  const seq = (id: number) => sequences.get(id) as Sequence;
  const waiting: number[] = [];
  const running: number[] = [];
  const finishNs = new Map<number, number>();
  const steps: StepRecord[] = [];
  let next = 0; // the next arrival in `order`
  let now = 0;
  let used = 0;
  let preemptions = 0;
  while (finishNs.size < requests.length) {
    while (next < order.length && (order[next] as ServeRequest).arrivalNs <= now) {
      waiting.push((order[next] as ServeRequest).id);
      next++;
    }
    if (running.length === 0 && waiting.length === 0) {
      now = (order[next] as ServeRequest).arrivalNs;
      continue;
    }
    let budget = config.maxBatchTokens;
    const decodes: StepItem[] = [];
    const prefills: StepItem[] = [];
    const preempted: number[] = [];
    const admitted: number[] = [];
    const grow = (s: Sequence, positions: number): boolean => {
      const need = blocksFor(positions, config.blockTokens) - s.blocks;
      if (need > config.kvBlocks - used) return false;
      if (need > 0) {
        s.blocks += need;
        used += need;
      }
      return true;
    };
    const itemOf = (s: Sequence): StepItem | null => {
      const inPrefill = s.computed < s.prefillTarget;
      const tokens = inPrefill ? Math.min(config.chunk, s.prefillTarget - s.computed, budget) : 1;
      if (tokens <= 0 || tokens > budget) return null;
      return { request: s.request.id, kind: inPrefill ? "prefill" : "decode", pos0: s.computed, tokens };
    };
    for (let i = 0; i < running.length; i++) {
      const id = running[i] as number;
      const s = seq(id);
      const item = itemOf(s);
      if (item === null) continue;
      let fits = grow(s, item.pos0 + item.tokens);
      while (!fits && running.length - 1 > i) {
        const victim = running.pop() as number;
        preempt(seq(victim));
        preempted.push(victim);
        waiting.unshift(victim);
        fits = grow(s, item.pos0 + item.tokens);
      }
      if (!fits) {
        running.pop();
        preempt(s);
        preempted.push(id);
        waiting.unshift(id);
        break;
      }
      (item.kind === "decode" ? decodes : prefills).push(item);
      budget -= item.tokens;
    }
    while (waiting.length > 0 && budget > 0) {
      const id = waiting[0] as number;
      const s = seq(id);
      const item = itemOf(s);
      if (item === null || !grow(s, item.pos0 + item.tokens)) break;
      waiting.shift();
      running.push(id);
      admitted.push(id);
      prefills.push(item);
      budget -= item.tokens;
    }
    const plan: StepPlan = {
      index: steps.length,
      startNs: now,
      items: [...decodes, ...prefills],
      usedBlocks: used,
      preempted,
      admitted,
    };
    if (plan.items.length === 0) {
      throw new Error(`serve scheduler: step ${plan.index} at ${now} ns has nothing to run`);
    }
    const ns = await stepTime(plan);
    now += ns;
    const finished: number[] = [];
    for (const item of plan.items) {
      const s = seq(item.request);
      s.computed += item.tokens;
      if (s.computed < s.prefillTarget) continue;
      s.generated++;
      s.firstTokenNs ??= now;
      if (s.generated < s.request.outputTokens) continue;
      finished.push(item.request);
      finishNs.set(item.request, now);
      used -= s.blocks;
      s.blocks = 0;
      running.splice(running.indexOf(item.request), 1);
    }
    const record: StepRecord = { ...plan, endNs: now, finished };
    steps.push(record);
    onStep?.(record);
  }
  return {
    steps,
    requests: requests.map((request) => {
      const s = seq(request.id);
      return {
        request,
        firstTokenNs: s.firstTokenNs as number,
        finishNs: finishNs.get(request.id) as number,
        preemptions: s.preemptions,
      };
    }),
    preemptions,
  };

  function preempt(s: Sequence): void {
    used -= s.blocks;
    s.blocks = 0;
    s.computed = 0;
    s.prefillTarget = s.request.promptTokens + s.generated;
    s.preemptions++;
    preemptions++;
  }
}

function checkConfig(requests: readonly ServeRequest[], config: SchedulerConfig): void {
  for (const key of ["maxBatchTokens", "chunk", "blockTokens", "kvBlocks"] as const) {
    if (!Number.isInteger(config[key]) || config[key] < 1) {
      throw new KbError(
        "RUNTIME_INVALID",
        `llama-serve: ${key} must be a positive integer, not ${config[key]}.`,
      );
    }
  }
  const capacity = config.kvBlocks * config.blockTokens;
  for (const request of requests) {
    const positions = request.promptTokens + request.outputTokens - 1;
    if (positions > capacity) {
      throw new KbError(
        "RUNTIME_INVALID",
        `llama-serve: request ${request.id} needs ${positions} KV positions (prompt ${request.promptTokens} + output ${request.outputTokens} - 1), more than the whole cache holds (kvBlocks ${config.kvBlocks} x blockTokens ${config.blockTokens} = ${capacity}). Raise kvBlocks or blockTokens, or shorten the request.`,
      );
    }
  }
}
