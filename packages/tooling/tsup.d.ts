import type { Options } from "tsup";

/** The tsup configuration every @kb package uses; `overrides` are merged over the defaults. */
export declare function kbTsupConfig(overrides?: Options): ReturnType<typeof import("tsup").defineConfig>;
