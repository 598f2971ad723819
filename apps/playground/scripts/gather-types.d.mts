/** The lib files a bench sees: the language (ES2022) and what a Web Worker offers. */
export declare const BENCH_LIBS: readonly string[];
/** Where the lib files sit in the virtual file system. */
export declare const LIB_DIR: string;
/**
 * The declarations the bench editor checks against, virtual path -> text (`/lib/...`,
 * `/node_modules/...`). Throws when the packages are not built yet.
 */
export declare function gatherTypes(): Record<string, string>;
