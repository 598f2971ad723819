import { defineConfig } from "vite";

// A static site: `base: "./"` makes every asset URL relative, so dist/ works from any path (a
// GitHub Pages project site, a sub-folder of any host). The run worker is an ES module worker,
// bundled separately (`new Worker(new URL(...), { type: "module" })`); nothing needs
// SharedArrayBuffer, so no COOP/COEP headers either.
export default defineConfig({
  base: "./",
  build: {
    outDir: "dist",
    target: "es2022",
    chunkSizeWarningLimit: 4096,
  },
  worker: {
    format: "es",
  },
  server: {
    // The examples are read from the repository's benches/, examples/ and topologies/.
    fs: { allow: ["../.."] },
  },
});
