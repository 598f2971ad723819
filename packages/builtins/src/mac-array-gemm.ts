import type { GemmTiming } from "@kb/components";
import {
  Component,
  type ComponentContext,
  type ComponentPeak,
  compute,
  computeSlotOf,
  type Message,
  type StageWork,
  TileToken,
} from "@kb/components";
import { wrongMessage } from "@kb/components/engine";
import type { Resource } from "@kb/des";
import * as z from "zod";

/** `dtype_cycles` of the built-in PE_GEMMs: cycles per MAC step by input dtype (a dtype not listed counts 1). @internal */
export const dtypeCyclesParam = (description: string) =>
  z
    .record(z.string(), z.number().positive())
    .default({ f16: 1, bf16: 1, f32: 4, i8: 0.5, i32: 4, f8e4m3: 0.5, f8e5m2: 0.5, f4e2m1: 0.5 })
    .describe(description);

/** The params every built-in MAC-array PE_GEMM has. @internal */
export interface MacArrayParams {
  readonly freq_ghz: number;
  readonly mac_rows: number;
  readonly mac_cols: number;
  readonly dtype_cycles: Readonly<Record<string, number>>;
  readonly queue_depth: number;
}

/**
 * The engine side of a built-in PE_GEMM: a GEMM stage takes `gemmCycles(m, n, k, dtype) /
 * freq_ghz` ns on the PE's shared compute slot (ADR-0014 D4); subclasses give the closed form.
 * @internal
 */
export abstract class MacArrayGemm<P extends MacArrayParams> extends Component<P> implements GemmTiming {
  private slot!: Resource;
  readonly macRows: number;
  readonly macCols: number;
  readonly freqGhz: number;
  arrayCycles = 0;
  readonly flopsByDtype: Record<string, number> = {};

  constructor(context: ComponentContext, params: P) {
    super(context, params, { queueDepth: params.queue_depth });
    this.macRows = params.mac_rows;
    this.macCols = params.mac_cols;
    this.freqGhz = params.freq_ghz;
  }

  override init(): void {
    this.slot = computeSlotOf(this);
  }

  abstract gemmCycles(m: number, n: number, k: number, dtype: string): number;

  process(message: Message): StageWork {
    if (!(message instanceof TileToken)) throw wrongMessage(this, message, "GEMM stages of tile tokens");
    const params = message.stage.params;
    if (params.type !== "gemm") throw wrongMessage(this, message, "GEMM stages");
    const flops = 2 * params.m * params.n * params.k;
    this.stats.flops += flops;
    this.flopsByDtype[params.dtype] = (this.flopsByDtype[params.dtype] ?? 0) + flops;
    // A mixed-format GEMM (fp8 x fp4) streams each pair at the slower of its operands' rates.
    const steps = params.k + (params.scaleBlocks ?? 0);
    const cycles = Math.max(
      this.gemmCycles(params.m, params.n, steps, params.dtype),
      params.dtypeB === undefined ? 0 : this.gemmCycles(params.m, params.n, steps, params.dtypeB),
    );
    this.arrayCycles += cycles;
    return compute(this, this.slot, cycles / this.freqGhz);
  }

  /** 2 x mac_rows x mac_cols x freq_ghz / the fewest cycles any dtype takes (at most 1). */
  override peak(): ComponentPeak {
    const cycles = Math.min(...Object.values(this.params.dtype_cycles), 1);
    return { flopsPerNs: (2 * this.macRows * this.macCols * this.freqGhz) / cycles };
  }
}
