import {
  Component,
  type ComponentContext,
  type ComponentPeak,
  compute,
  computeSlotOf,
  defineComponent,
  type Message,
  type StageWork,
  TileToken,
} from "@kb/components";
import { wrongMessage } from "@kb/components/engine";
import type { Resource } from "@kb/des";
import { MATH_OPS, queueDepthParam } from "@kb/spec";
import * as z from "zod";

// PE_MATH. The other PE engines: pe-cpu.ts (PE_CPU), pe-scheduler.ts (PE_SCHEDULER),
// pe-memory-engines.ts (PE_DMA, PE_MMU, PE_TCM, PE_FETCH_STORE).

// ---------------------------------------------------------------------------------------------
// PE_MATH (PE_GEMM: pe-gemm-v1.ts, pe-gemm-v2.ts; the compute slot they share: pe-support.ts)

const mathParams = z.strictObject({
  freq_ghz: z.number().positive().default(1).describe("Clock, GHz."),
  lanes: z.number().int().min(1).default(64).describe("SIMD lanes (elements per cycle per pass)."),
  op_cycles: z
    .record(z.string(), z.number().min(0))
    .default({})
    .describe("Cycles per vector by op, overriding the defaults (add 1, div 4, exp 4, softmax 11, ...)."),
  overhead_cycles: z.number().int().min(0).default(4).describe("Fixed cycles per op."),
  queue_depth: queueDepthParam(4),
});

/**
 * PE_MATH timing: `ceil(elements / lanes) * cycles(op)` plus, for reductions, a lane tree of
 * `ceil(log2(min(length, lanes)))` cycles per output row, `treePasses` times (the op table's: twice
 * for softmax, max and sum), plus `overhead_cycles`; divided by `freq_ghz`. `cycles(op)` is the
 * `op_cycles` param, else the op table's default. Ops joined with "+" (epilogues) add up.
 */
export function simdNs(
  params: z.output<typeof mathParams>,
  op: string,
  elements: number,
  reduceLength: number,
): number {
  const vectors = Math.ceil(elements / params.lanes);
  let cycles = params.overhead_cycles;
  for (const name of op.split("+")) {
    const info = MATH_OPS[name];
    const perVector = params.op_cycles[name] ?? info?.cycles ?? 1;
    cycles += vectors * perVector;
    const passes = info?.treePasses ?? 0;
    if (reduceLength > 0 && passes > 0) {
      const rows = Math.ceil(elements / reduceLength);
      const tree = Math.ceil(Math.log2(Math.max(2, Math.min(reduceLength, params.lanes))));
      cycles += rows * tree * passes;
    }
  }
  return cycles / params.freq_ghz;
}

/** PE_MATH v1: SIMD timing. @internal */
export class PeMathV1 extends Component<z.output<typeof mathParams>> {
  private slot!: Resource;

  constructor(context: ComponentContext, params: z.output<typeof mathParams>) {
    super(context, params, { queueDepth: params.queue_depth });
  }

  override init(): void {
    this.slot = computeSlotOf(this);
  }

  process(message: Message): StageWork {
    if (!(message instanceof TileToken)) throw wrongMessage(this, message, "MATH stages of tile tokens");
    const params = message.stage.params;
    if (params.type !== "math") throw wrongMessage(this, message, "MATH stages");
    this.stats.flops += params.elements * params.op.split("+").length;
    return compute(this, this.slot, simdNs(this.params, params.op, params.elements, params.reduceLength));
  }

  /** One op per lane per cycle. */
  override peak(): ComponentPeak {
    return { flopsPerNs: this.params.lanes * this.params.freq_ghz };
  }
}

export const peMathV1 = defineComponent({
  kind: "pe_math",
  impl: "pe_math_v1",
  analytic: true,
  description:
    "SIMD engine: ceil(elements / lanes) x cycles(op) (+ a log2 lane tree per row for reductions, twice for softmax) + overhead_cycles, over freq_ghz, on the PE's shared compute slot.",
  params: mathParams,
  create: (context, params) => new PeMathV1(context, params),
});
