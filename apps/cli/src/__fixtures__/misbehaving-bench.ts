import { defineBench } from "@kb/runtime";
import * as z from "zod";

/**
 * A bench whose process goes wrong on purpose (the kb sweep tests): `oom` fills the JavaScript
 * heap, `abort` ends the process with SIGABRT, `hang` never returns; `ok` runs nothing.
 */
export default defineBench({
  name: "misbehaving",
  params: z.object({ mode: z.enum(["ok", "oom", "abort", "hang"]).default("ok") }),
  async run(_sim, p) {
    if (p.mode === "oom") {
      const kept: unknown[] = [];
      for (;;) kept.push({ index: kept.length, text: `item ${kept.length}` });
    }
    if (p.mode === "abort") process.abort();
    if (p.mode === "hang") await new Promise(() => setInterval(() => {}, 1000));
  },
});
