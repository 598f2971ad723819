import type { HbmPagePolicy } from "./policy.js";

/** Open page (the default): a row stays open until a conflict or a refresh closes it. */
export const openPage: HbmPagePolicy = {
  name: "open",
  closeAfterRun: () => false,
};
