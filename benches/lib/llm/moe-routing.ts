// The router of a Mixtral-style MoE block on the host, as Hugging Face's MixtralSparseMoeBlock
// computes it: softmax of the router logits over the experts, the top-k probabilities (the first
// expert on ties, as argmax), renormalised to sum to 1. Then GShard's capacity rule: each expert
// keeps at most `capacity` assignments, first every token's first choice in token order, then
// every token's second choice in token order (GShard's top-2 gating offsets the second choice's
// positions by the first choice's count); an assignment past its expert's capacity is dropped and
// contributes nothing (the token keeps its residual and its other expert's share, not renormalised).

/** One token's experts in choice order and their renormalised weights. */
export interface TokenRoute {
  readonly experts: readonly number[];
  readonly weights: readonly number[];
}

/**
 * The top-`topK` experts of each token from `logits` (`[tokens, experts]` row-major): softmax per
 * row in f64, the largest probability first (the lowest expert index on ties), weights divided by
 * the sum of the chosen probabilities.
 */
export function routeTokens(logits: ArrayLike<number>, experts: number, topK: number): TokenRoute[] {
  const tokens = logits.length / experts;
  const routes: TokenRoute[] = [];
  for (let t = 0; t < tokens; t++) {
    const row = Array.from({ length: experts }, (_, e) => logits[t * experts + e] as number);
    const max = Math.max(...row);
    const exps = row.map((x) => Math.exp(x - max));
    const sum = exps.reduce((a, b) => a + b, 0);
    const probs = exps.map((x) => x / sum);
    const chosen: number[] = [];
    for (let k = 0; k < topK; k++) {
      let best = -1;
      for (let e = 0; e < experts; e++) {
        if (chosen.includes(e)) continue;
        if (best < 0 || (probs[e] as number) > (probs[best] as number)) best = e;
      }
      chosen.push(best);
    }
    const total = chosen.reduce((a, e) => a + (probs[e] as number), 0);
    routes.push({ experts: chosen, weights: chosen.map((e) => (probs[e] as number) / total) });
  }
  return routes;
}

/**
 * An expert's capacity (GShard, Switch Transformer): `ceil(factor x tokens x topK / experts)`
 * assignments; `null` factor: no capacity (every assignment kept, as Mixtral runs).
 */
export function expertCapacity(tokens: number, experts: number, topK: number, factor: number | null): number {
  if (factor === null) return tokens;
  return Math.ceil((factor * tokens * topK) / experts);
}

/** Which assignments survive the capacity and how many each expert got. */
export interface CapacityOutcome {
  /** `kept[t][k]`: token `t`'s choice `k` is computed. */
  readonly kept: readonly (readonly boolean[])[];
  /** Assignments routed to each expert (before the capacity). */
  readonly routed: readonly number[];
  /** Assignments each expert computes (at most the capacity). */
  readonly computed: readonly number[];
  /** Assignments dropped in all. */
  readonly dropped: number;
}

/**
 * GShard's capacity rule over `routes`: assignments are taken choice by choice (all first
 * choices in token order, then all second choices, ...), and an expert keeps the first `capacity`
 * it is given; the rest are dropped.
 */
export function applyCapacity(
  routes: readonly TokenRoute[],
  experts: number,
  capacity: number,
): CapacityOutcome {
  const routed = new Array<number>(experts).fill(0);
  const computed = new Array<number>(experts).fill(0);
  const kept = routes.map((route) => route.experts.map(() => false));
  const topK = routes[0]?.experts.length ?? 0;
  let dropped = 0;
  for (let k = 0; k < topK; k++) {
    for (const [t, route] of routes.entries()) {
      const e = route.experts[k] as number;
      routed[e] = (routed[e] as number) + 1;
      if ((computed[e] as number) < capacity) {
        computed[e] = (computed[e] as number) + 1;
        (kept[t] as boolean[])[k] = true;
      } else {
        dropped++;
      }
    }
  }
  return { kept, routed, computed, dropped };
}
