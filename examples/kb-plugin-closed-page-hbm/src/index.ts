import { definePlugin } from "@kb/spec";
import { closedPageHbm } from "./closed-page-hbm.js";

export type { ClosedPageHbmParams, RowAccess } from "./closed-page-hbm.js";
export { afterRefresh, closedPageHbm, closedPageHbmParams, rowAccesses } from "./closed-page-hbm.js";

/**
 * The plug-in: list `kb-plugin-closed-page-hbm` in a topology's `plugins:` and write
 * `impl: "kb-plugin-closed-page-hbm:closed_page_hbm"` for the HBM controllers to time
 * (`cube.hbm.impl`).
 */
export default definePlugin({
  meta: { name: "kb-plugin-closed-page-hbm", version: "0.1.0" },
  components: [closedPageHbm],
});
