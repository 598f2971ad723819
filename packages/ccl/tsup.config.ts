import { kbTsupConfig } from "@kb/tooling/tsup";

export default kbTsupConfig({ entry: ["src/index.ts"] });
