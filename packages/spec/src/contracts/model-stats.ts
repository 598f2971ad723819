/**
 * One counter a timing model publishes (its `stats()`): row hits of an HBM controller, credit
 * stalls of a router, ... The framework copies a model's counters into `components[].stats` of
 * the run results, where `kb run`, `kb web` and a sweep's metrics read them.
 *
 * Like Ramulator's `register_stat` or SST's `registerStatistic`: a name, a unit, a sentence, and
 * the value, in total and (optionally) per port or lane.
 */
export interface ModelStat {
  /** snake_case, unique within the model (`"row_hits"`, `"credit_stalls"`). */
  readonly name: string;
  /** What one unit counts: `"count"`, `"ns"`, `"bytes"`, `"cycles"`, ... */
  readonly unit: string;
  /** One sentence: what is counted (shown by `kb components list` and `kb web`). */
  readonly description: string;
  /** The value over the whole model (the sum of `perPort` when both are given). */
  readonly total: number;
  /** The value per port or lane (an HBM pseudo-channel, a router input), in port order. */
  readonly perPort?: readonly number[];
}

/**
 * A counter a model declares on its definition (`counters:` of `defineMemoryModel`,
 * `defineStageEngine`, `defineForwardingModel`): its name, unit and sentence without a value, so
 * `kb components list` documents what the impl publishes before anything runs.
 */
export type ModelStatInfo = Pick<ModelStat, "name" | "unit" | "description">;
