import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import * as z from "zod";
import { defineBench } from "../bench.js";
import { dataFileParam, dataFileParams } from "../data-files.js";
import { sha256Hex } from "../manifest.js";
import { readDataFiles } from "./data-files-node.js";
import { runManifest } from "./manifest-node.js";

// A bench's data file (a request trace) is part of the run's identity: an edited file gives another
// manifest digest, so `kb run --cache` and sweeps never serve the results of the old file.

const scratch = mkdtempSync(join(tmpdir(), "kb-data-files-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const traceBench = defineBench({
  name: "reads-a-trace",
  params: z.object({
    trace: dataFileParam("A trace.").optional(),
    label: z.string().default("x"),
  }),
  async run() {},
});

describe("data-file params", () => {
  it("are found under .optional(), and only when given; plain string params are not data files", () => {
    expect(dataFileParams(traceBench, { label: "a.jsonl" })).toEqual([]);
    expect(dataFileParams(traceBench, { trace: "t.jsonl", label: "a.jsonl" })).toEqual([
      { param: "trace", path: "t.jsonl" },
    ]);
    expect(traceBench.params.safeParse({ trace: "" }).success).toBe(false);
  });

  it("put the file's sha256 in the manifest: editing the file changes the run's digest", async () => {
    const root = mkdtempSync(join(scratch, "root-"));
    const file = join(root, "trace.jsonl");
    const manifest = () =>
      runManifest({
        bench: traceBench,
        benchFile: fileURLToPath(import.meta.url),
        topology: { name: "tiny" },
        params: { trace: file, label: "x" },
        packages: {},
      });
    const text = '{"arrival_ns": 0, "prompt_tokens": 4, "output_tokens": 2}\n';
    writeFileSync(file, text);
    const cwd = process.cwd();
    process.chdir(root);
    try {
      const first = await manifest();
      expect(first.dataFiles).toEqual({ trace: await sha256Hex(text) });
      expect((await manifest()).digest).toBe(first.digest);
      writeFileSync(file, text.replace('"output_tokens": 2', '"output_tokens": 3'));
      const edited = await manifest();
      expect(edited.digest).not.toBe(first.digest);
    } finally {
      process.chdir(cwd);
    }
  });

  it("leave a run without data files as it was: no dataFiles field", async () => {
    const plain = await runManifest({
      bench: traceBench,
      benchFile: fileURLToPath(import.meta.url),
      topology: { name: "tiny" },
      params: { label: "x" },
      packages: {},
    });
    expect(Object.hasOwn(plain, "dataFiles")).toBe(false);
  });

  it("are read only inside the folder kb runs in: a path or a symlink out of it is refused, so is a missing file", () => {
    const root = mkdtempSync(join(scratch, "inside-"));
    const outside = join(scratch, "outside.jsonl");
    writeFileSync(outside, "{}\n");
    mkdirSync(join(root, "data"));
    symlinkSync(outside, join(root, "data", "link.jsonl"));
    for (const path of ["../outside.jsonl", outside, "data/link.jsonl"]) {
      expect(() => readDataFiles(traceBench, { trace: path }, root)).toThrow(
        /param trace: .* is outside the folder kb runs in .*Copy the file there/,
      );
    }
    expect(() => readDataFiles(traceBench, { trace: "nope.jsonl" }, root)).toThrow(
      /param trace: file nope\.jsonl not found/,
    );
  });
});
