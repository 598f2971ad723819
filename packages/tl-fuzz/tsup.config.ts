import { kbTsupConfig } from "@kb/tooling/tsup";

// `pnpm fuzz:tl` runs the built CLI against the built packages (what users install).
export default kbTsupConfig({
  entry: { cli: "src/node/cli.ts" },
  platform: "node",
  dts: false,
  external: [/^@kb\//],
});
