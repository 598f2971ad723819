import { kbTsupConfig } from "@kb/tooling/tsup";

export default kbTsupConfig();
