import { definePlugin } from "@kb/spec";
import { systolicGemm } from "./systolic-gemm.js";

export type { SystolicGemmParams } from "./systolic-gemm.js";
export {
  systolicGemm,
  systolicGemmCycles,
  systolicGemmEnergy,
  systolicGemmNs,
  systolicGemmParams,
} from "./systolic-gemm.js";

/**
 * The plug-in: list `kb-plugin-systolic-gemm` in a topology's `plugins:` and write
 * `impl: "kb-plugin-systolic-gemm:systolic_gemm"` for the PE_GEMM components to time.
 */
export default definePlugin({
  meta: { name: "kb-plugin-systolic-gemm", version: "0.1.0" },
  components: [systolicGemm],
});
