import * as builtins from "@kb/builtins";
import type { SharedModules } from "@kb/components/node";

/**
 * The modules kb hands a plug-in file besides `@kb/components` and `zod` (which the plug-in loader
 * hands itself) when the file's folder does not provide them: `@kb/builtins`, so a plug-in that
 * wraps a built-in model (`BUILTIN_COMPONENTS.find(...)`) loads from any folder, on the very
 * definitions the run registers.
 */
export const PLUGIN_SHARED_MODULES: SharedModules = Object.freeze({ "@kb/builtins": builtins });
