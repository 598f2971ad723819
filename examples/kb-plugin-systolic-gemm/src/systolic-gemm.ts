import {
  Component,
  type ComponentContext,
  compute,
  computeSlotOf,
  defineComponent,
  type GemmTiming,
  KbError,
  type Message,
  queueDepthParam,
  type StageWork,
  TileToken,
} from "@kb/components";
import * as z from "zod";

/** Params of `systolic_gemm` (strict: an unknown key in a topology is an error). */
export const systolicGemmParams = z.strictObject({
  rows: z
    .number()
    .int()
    .min(1)
    .default(32)
    .describe("PE rows of the array: the K extent of one weight fold."),
  cols: z
    .number()
    .int()
    .min(1)
    .default(32)
    .describe("PE columns of the array: the N extent of one weight fold."),
  freq_ghz: z.number().positive().default(1).describe("Clock, GHz."),
  overhead_cycles: z.number().int().min(0).default(8).describe("Fixed cycles per GEMM (issue and drain)."),
  queue_depth: queueDepthParam(4),
});

/** `systolic_gemm` params with defaults filled in. */
export type SystolicGemmParams = z.output<typeof systolicGemmParams>;

/**
 * Time of one `m x n x k` GEMM on a weight-stationary `rows x cols` systolic array, in ns.
 *
 * The weights are cut into `folds = ceil(k / rows) * ceil(n / cols)` tiles of `rows x cols`. Each
 * fold loads its weights (`rows` cycles), streams the `m` rows of A through the array, and fills
 * and drains the skewed wavefront (`rows + cols - 2` cycles):
 *
 * `cycles = folds * (rows + m + rows + cols - 2) + overhead_cycles`, `ns = cycles / freq_ghz`.
 *
 * Every dtype runs at one MAC per PE per cycle.
 */
export function systolicGemmNs(params: SystolicGemmParams, m: number, n: number, k: number): number {
  return systolicGemmCycles(params, m, n, k) / params.freq_ghz;
}

/** The cycles of {@link systolicGemmNs}: `folds * (rows + m + rows + cols - 2) + overhead_cycles`. */
export function systolicGemmCycles(params: SystolicGemmParams, m: number, n: number, k: number): number {
  const { rows, cols } = params;
  const folds = Math.ceil(k / rows) * Math.ceil(n / cols);
  return folds * (rows + m + rows + cols - 2) + params.overhead_cycles;
}

/** The compute slot a PE's GEMM and MATH engines share (ADR-0014 D4), as `compute` takes it. */
type ComputeSlot = Parameters<typeof compute>[1];

/**
 * PE_GEMM as a weight-stationary systolic array. Like the built-in `pe_gemm_v1`, each GEMM stage
 * runs on the PE's compute slot, shared with PE_MATH, so a GEMM and a MATH op of one PE never
 * overlap. It states its timing (`GemmTiming` of `@kb/components`: the members `macRows` to
 * `arrayCycles`), so `kb probe` holds it to its formula and `kb run` reports its array utilisation.
 */
export class SystolicGemm extends Component<SystolicGemmParams> implements GemmTiming {
  private slot!: ComputeSlot;
  readonly macRows: number;
  readonly macCols: number;
  readonly freqGhz: number;
  /** Cycles charged so far. */
  arrayCycles = 0;

  constructor(context: ComponentContext, params: SystolicGemmParams) {
    super(context, params, { queueDepth: params.queue_depth });
    this.macRows = params.rows;
    this.macCols = params.cols;
    this.freqGhz = params.freq_ghz;
  }

  /** Every dtype runs at one MAC per PE per cycle. */
  gemmCycles(m: number, n: number, k: number): number {
    return systolicGemmCycles(this.params, m, n, k);
  }

  override init(): void {
    this.slot = computeSlotOf(this);
  }

  process(message: Message): StageWork {
    const params = message instanceof TileToken ? message.stage.params : null;
    if (params === null || params.type !== "gemm") {
      throw new KbError(
        "MACHINE_INVARIANT",
        `${this.impl} received "${message.label}"; it services GEMM stages of tile tokens.`,
        { context: { nodeId: this.id, simTimeNs: this.env.now } },
      );
    }
    this.stats.flops += 2 * params.m * params.n * params.k;
    const cycles = this.gemmCycles(params.m, params.n, params.k);
    this.arrayCycles += cycles;
    return compute(this, this.slot, cycles / this.freqGhz);
  }
}

/** The `systolic_gemm` impl of kind `pe_gemm`; in a topology: `"kb-plugin-systolic-gemm:systolic_gemm"`. */
export const systolicGemm = defineComponent({
  kind: "pe_gemm",
  impl: "systolic_gemm",
  description:
    "GEMM engine as a weight-stationary rows x cols systolic array: a tile takes (ceil(k/rows) * ceil(n/cols) * (rows + m + rows + cols - 2) + overhead_cycles) / freq_ghz ns (per weight fold: weight load, streaming m rows, skewed fill and drain) on the PE's shared compute slot.",
  params: systolicGemmParams,
  create: (context, params) => new SystolicGemm(context, params),
});
