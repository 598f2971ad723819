import { defineConfig } from "vitest/config";

// One copy of @kb/components in the tests. Linked from a kernbench-ts clone (a `file:` dependency
// is a symlink), vitest would follow the link out of node_modules and load its own copy of the
// package, while the plug-in, loaded by kb's loader from dist/ once built, gets Node's: two copies,
// and the machine's engines would not be the test's classes. Keeping the node_modules path leaves
// the package to Node, as a registry install is: one copy, with sources or dist/.
export default defineConfig({ resolve: { preserveSymlinks: true } });
