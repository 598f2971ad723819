import { readdirSync, readFileSync } from "node:fs";
import { launchSources } from "@kb/web-ui/source-model";
import { describe, expect, it } from "vitest";
import type { RunRecord } from "../src/ui/run-record.js";
import { webDataOf } from "../src/ui/run-record.js";
import { runRequest } from "../src/worker/run-request.js";
import { repoRoot } from "./worker-page.js";

// The playground's "Time by kernel line": a run in the worker names the lines of the editor's
// files (each file is evaluated under its own path), and the page hands kb web's source view the
// files the run read, so the view lays its per-line bars over the text the user edited.

/** `benches/<main>` and every non-test file of benches/lib, as the playground's files. */
function benchFiles(main: string): Record<string, string> {
  const files: Record<string, string> = { [main]: readFileSync(`${repoRoot}${main}`, "utf8") };
  for (const entry of readdirSync(`${repoRoot}benches/lib`)) {
    if (entry.endsWith(".ts") && !entry.endsWith(".test.ts"))
      files[`benches/lib/${entry}`] = readFileSync(`${repoRoot}benches/lib/${entry}`, "utf8");
  }
  return files;
}

describe("the playground's source view", () => {
  it("lays the run's per-line figures over the bench's text as the editor held it", async () => {
    const main = "benches/vector-add.ts";
    // The editor's text: the example with a comment line added on top (every line moves down one).
    const files = benchFiles(main);
    files[main] = `// edited in the playground\n${files[main]}`;
    const done = await runRequest(
      {
        type: "run",
        id: 1,
        files,
        main,
        topology: {
          name: "topologies/default.yaml",
          text: readFileSync(`${repoRoot}topologies/default.yaml`, "utf8"),
        },
        params: { n: "16384", chunk: "4096" },
        verify: false,
        limits: {},
        trace: false,
        opLog: false,
      },
      () => {},
    );
    const record: RunRecord = {
      label: "run 1 · vector-add",
      results: done.results,
      resultsJson: done.resultsJson,
      trace: null,
      opLog: null,
      topology: { name: "default.yaml", text: "" },
      sources: files,
    };
    const data = webDataOf(record, null, { name: "default.yaml" } as never, null);
    expect(data.sources).toBe(files);
    const [view] = launchSources(data.results[0]?.results ?? done.results, data.sources ?? {});
    const file = view?.files[0];
    expect(file?.file).toBe(main);
    expect(file?.hasText).toBe(true);
    expect(file?.lines.map((line) => line.text)).toEqual(files[main]?.replace(/\n$/, "").split("\n"));
    // The lines with figures are the kernel's four commands: load x, load y, add, store.
    const text = (files[main] as string).split("\n");
    const commands = text.flatMap((line, at) => (/await tl\.(load|add|store)\(/.test(line) ? [at + 1] : []));
    expect(commands).toHaveLength(4);
    expect(file?.lines.filter((line) => line.site !== null).map((line) => line.number)).toEqual(commands);
  }, 60_000);
});
