import { definePlugin } from "@kb/spec";
import { creditRouterModel } from "./credit-router.js";

export type { CreditRouterParams } from "./credit-router.js";
export { creditRouter, creditRouterModel, creditRouterParams } from "./credit-router.js";

/**
 * The plug-in: load `kb-plugin-credit-router` (`--plugin`, or a topology's `plugins:`) and write
 * `impl: "kb-plugin-credit-router:credit_router"` for the NOC routers (`cube.noc.impl`).
 */
export default definePlugin({
  meta: { name: "kb-plugin-credit-router", version: "0.1.0" },
  components: [creditRouterModel],
});
