import type { BenchCheck, Simulator } from "@kb/runtime";
import type { Dtype, Tensor } from "@kb/tensor";
import type { LayerDims } from "../llm/config.js";
import { type LayerLaunch, type LayerPlan, type RankBuffers, runLayer, uploadLayer } from "../llm/layer.js";
import type { TpPlacement } from "../llm/ranks.js";
import { type LayerShape, type LayerWeights, layerReference, type PastCache } from "../llm/reference.js";
import { blocksFor, type StepItem, type StepPlan } from "./scheduler.js";

// A step of the serving loop on the model: the tiny / llama presets' layers (benches/lib/llm) run
// with the step's batch. The layer kernels take one shape per launch (every sequence the same new
// tokens and the same cached positions), so a step runs as two parts, each its own launches: the
// prefill chunks, padded to the longest chunk and the furthest first position of the step's
// chunks, both rounded up to whole KV blocks, then the decodes, one token each over the longest
// context of the step rounded up to whole blocks (paged attention reads whole blocks). Padding
// makes a part's time an upper bound of a ragged kernel's, and keeps the shapes few (the
// `cached` step model runs each once).

/** How a step's time is found: every step simulated, or a shape's first time reused. */
export type StepModel = "simulate" | "cached";

/** A part of a step: its kernels' phase and the padded shape they run. */
export interface StepPart {
  readonly phase: "prefill" | "decode";
  readonly shape: LayerShape;
}

/** The parts of a step: the prefill chunks (if any), then the decodes (if any). */
export function stepParts(items: readonly StepItem[], blockTokens: number): StepPart[] {
  const parts: StepPart[] = [];
  const prefills = items.filter((item) => item.kind === "prefill");
  const decodes = items.filter((item) => item.kind === "decode");
  const whole = (n: number) => blocksFor(n, blockTokens) * blockTokens;
  if (prefills.length > 0) {
    const tokens = whole(Math.max(...prefills.map((item) => item.tokens)));
    const pos0 = whole(Math.max(...prefills.map((item) => item.pos0)));
    parts.push({ phase: "prefill", shape: { batch: prefills.length, tokens, pos0 } });
  }
  if (decodes.length > 0) {
    const ctx = whole(Math.max(...decodes.map((item) => item.pos0 + 1)));
    parts.push({ phase: "decode", shape: { batch: decodes.length, tokens: 1, pos0: ctx - 1 } });
  }
  return parts;
}

const keyOf = (part: StepPart) => `${part.phase} ${part.shape.batch}x${part.shape.tokens}@${part.shape.pos0}`;

/** A shape's device tensors and inputs, uploaded once and run again by every step of that shape. */
interface ShapeBuffers {
  readonly part: StepPart;
  readonly x: Tensor;
  readonly past: PastCache | null;
  readonly buffers: RankBuffers[];
  /** Simulated ns of the part's first run (`cached` reuses it). */
  ns: number;
}

/** What the runner needs: the model, where it runs and its random inputs. */
export interface StepModelOptions {
  readonly dims: LayerDims;
  readonly dtype: Dtype;
  readonly placement: TpPlacement;
  /** The weights, or a function making them on first call (`lazyWeights`: none in a timing run). */
  readonly weights: LayerWeights | (() => LayerWeights);
  readonly layers: number;
  readonly plan: Omit<LayerPlan, "shape" | "phase" | "dims" | "dtype">;
  readonly blockTokens: number;
  readonly mode: StepModel;
  readonly seed: number;
}

/**
 * Runs steps on the simulator: {@link StepModelRunner.time} runs a step's parts (`layers` layers
 * each) and returns the step's time, the sum of each part's kernel span (from its first launch's
 * start to its last one's end; the host copies that reset a part's input are outside it). The
 * activations and KV cache are random (seeded per shape): the kernels see the step's shapes, not
 * the requests' tokens. `checks` gives `--verify` the output of each shape that ran (its last run,
 * from the same input) against the layers' host reference.
 */
export class StepModelRunner {
  private readonly shapes = new Map<string, ShapeBuffers>();
  /** Steps whose time was reused (cached mode). */
  reused = 0;
  /** Parts that ran on the simulator. */
  simulated = 0;
  /** Kernel time of the simulated launches by their verdict's rule (docs/reports.md): what bounds the steps. */
  readonly boundNs = new Map<string, number>();

  constructor(
    private readonly sim: Simulator,
    private readonly options: StepModelOptions,
  ) {}

  /** The step's simulated time, ns. */
  async time(plan: StepPlan): Promise<number> {
    let ns = 0;
    for (const part of stepParts(plan.items, this.options.blockTokens)) ns += await this.runPart(part);
    return ns;
  }

  private async runPart(part: StepPart): Promise<number> {
    const key = keyOf(part);
    const known = this.shapes.get(key);
    if (known !== undefined && this.options.mode === "cached") {
      this.reused++;
      return known.ns;
    }
    const shaped = known ?? (await this.upload(part, key));
    const { sim, options } = this;
    if (known !== undefined) for (const b of shaped.buffers) await sim.copyToDevice(shaped.x, b.X);
    const layerPlan: LayerPlan = {
      ...options.plan,
      dims: options.dims,
      dtype: options.dtype,
      shape: part.shape,
      phase: part.phase,
    };
    const launches: LayerLaunch[] = [];
    for (let layer = 0; layer < options.layers; layer++) {
      launches.push(...(await runLayer(sim, options.placement, layerPlan, shaped.buffers, layer)));
    }
    for (const { record } of launches) {
      const rule = record.verdict.rule;
      this.boundNs.set(rule, (this.boundNs.get(rule) ?? 0) + record.endNs - record.startNs);
    }
    const start = launches[0]?.record.startNs ?? 0;
    const end = launches.at(-1)?.record.endNs ?? 0;
    this.simulated++;
    if (known === undefined) shaped.ns = end - start;
    return end - start;
  }

  private async upload(part: StepPart, key: string): Promise<ShapeBuffers> {
    const { sim, options } = this;
    const { dims, dtype } = options;
    const seed = options.seed + 100 + 3 * this.shapes.size;
    const { batch, tokens, pos0 } = part.shape;
    const x = sim.random([batch * tokens, dims.hidden], dtype, { seed });
    const kvWidth = dims.kvHeads * dims.headDim;
    const past: PastCache | null =
      pos0 === 0
        ? null
        : {
            k: sim.random([batch * pos0, kvWidth], dtype, { seed: seed + 1 }),
            v: sim.random([batch * pos0, kvWidth], dtype, { seed: seed + 2 }),
          };
    const plan: LayerPlan = { ...options.plan, dims, dtype, shape: part.shape, phase: part.phase };
    const buffers = await uploadLayer(sim, options.placement, plan, options.weights, x, past);
    const shaped: ShapeBuffers = { part, x, past, buffers, ns: 0 };
    this.shapes.set(key, shaped);
    return shaped;
  }

  /** The `--verify` checks: the first and last rank's output of up to `limit` shapes, in order of first run. */
  checks(limit: number): Record<string, BenchCheck> {
    const { dims, dtype, weights, layers } = this.options;
    const check: Record<string, BenchCheck> = {};
    for (const [key, shaped] of [...this.shapes].slice(0, limit)) {
      const reference = () => {
        let y = shaped.x;
        for (let layer = 0; layer < layers; layer++) {
          y = layerReference(
            y,
            typeof weights === "function" ? weights() : weights,
            dims,
            shaped.part.shape,
            shaped.past,
            dtype,
          );
        }
        return y;
      };
      let cached: Tensor | null = null;
      const once = () => {
        cached ??= reference();
        return cached;
      };
      const last = shaped.buffers.length - 1;
      for (const r of [...new Set([0, last])]) {
        const b = shaped.buffers[r] as RankBuffers;
        check[`${key.replace(/ /g, ".")}.rank${r}`] = {
          actual: layers % 2 === 0 ? b.X : b.Y,
          reference: once,
        };
      }
    }
    return check;
  }
}
