import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { isKbError } from "@kb/errors";
import { afterAll, describe, expect, it } from "vitest";
import { locateBench, locateTopology, shippedDir } from "./bench-files.js";

// Bench and topology names are looked up in the working folder and its parents, then among what
// kb ships: from sources that is the repository (the build copies it into dist/shipped).

const root = fileURLToPath(new URL("../../../", import.meta.url));
// realpath: macOS's tmpdir is a symlink, and lookups resolve the directory they start from.
const scratch = realpathSync(mkdtempSync(join(tmpdir(), "kb-lookup-")));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** A fresh folder under the scratch folder with `files` (relative path -> contents). */
function folder(name: string, files: Record<string, string> = {}): string {
  const dir = join(scratch, name);
  mkdirSync(dir, { recursive: true });
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(dir, path, ".."), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  return dir;
}

function thrown(action: () => unknown): { code: string; message: string } {
  try {
    action();
  } catch (error) {
    if (isKbError(error)) return { code: error.code, message: error.message };
    throw error;
  }
  throw new Error("expected a KbError");
}

describe("kb's shipped benches and topologies", () => {
  it("are the repository's when kb runs from its sources", () => {
    expect(shippedDir()).toBe(join(root).replace(/[/\\]$/, ""));
  });
});

describe("locateBench", () => {
  it("finds a bench name among the shipped benches from an empty folder", () => {
    expect(locateBench("gemm", folder("empty"))).toBe(join(shippedDir(), "benches", "gemm.ts"));
  });

  it("prefers benches/NAME.ts of the working folder or a parent over the shipped one", () => {
    const project = folder("own-bench", { "benches/gemm.ts": "export default 1;\n" });
    const below = folder("own-bench/src/deep");
    expect(locateBench("gemm", below)).toBe(join(project, "benches", "gemm.ts"));
  });

  it("takes a path as is, from the working folder", () => {
    const dir = folder("by-path", { "my-bench.ts": "export default 1;\n" });
    expect(locateBench("./my-bench.ts", dir)).toBe(join(dir, "my-bench.ts"));
    expect(locateBench("my-bench.ts", dir)).toBe(join(dir, "my-bench.ts"));
  });

  it("names where it looked and the benches it found when a name is unknown", () => {
    const dir = folder("unknown-bench", { "benches/mine.ts": "export default 1;\n" });
    const { code, message } = thrown(() => locateBench("nope", dir));
    expect(code).toBe("RUNTIME_INVALID");
    expect(message).toContain(`looked for benches/nope.ts in ${dir} and its parents`);
    expect(message).toContain(`then nope.ts in kb's own ${join(shippedDir(), "benches")}`);
    expect(message).toContain(
      `Benches found in ${join(dir, "benches")}: mine; in ${join(shippedDir(), "benches")}: `,
    );
    expect(message).toMatch(
      /: allreduce, alltoall, attention, .*gemm, gemm-dot, .*vector-add, vector-add-grid\./,
    );
  });

  it("suggests the nearest bench name found for a misspelt one", () => {
    const { message } = thrown(() => locateBench("gemmm", folder("misspelt-bench")));
    expect(message).toMatch(
      /^\[RUNTIME_INVALID\] no bench named "gemmm" \(did you mean "gemm"\?\): looked for /,
    );
  });
});

describe("locateTopology", () => {
  it("finds a shipped topology by name, with or without .yaml, from any folder", () => {
    const dir = folder("empty-topology");
    const refCube = join(shippedDir(), "topologies", "ref-cube.yaml");
    expect(locateTopology("ref-cube", dir)).toBe(refCube);
    expect(locateTopology("ref-cube.yaml", dir)).toBe(refCube);
    expect(locateTopology("default", dir)).toBe(join(shippedDir(), "topologies", "default.yaml"));
  });

  it("prefers topologies/NAME.yaml (or .yml) of the working folder or a parent", () => {
    const project = folder("own-topology", {
      "topologies/default.yaml": "name: mine\n",
      "topologies/small.yml": "name: small\n",
    });
    const below = folder("own-topology/benches");
    expect(locateTopology("default", below)).toBe(join(project, "topologies", "default.yaml"));
    expect(locateTopology("small", below)).toBe(join(project, "topologies", "small.yml"));
  });

  it("takes a path, or a file name that exists in the working folder, as is", () => {
    const dir = folder("topology-path", { "ref-cube.yaml": "name: here\n" });
    expect(locateTopology("ref-cube.yaml", dir)).toBe(join(dir, "ref-cube.yaml"));
    // A path is not looked up: loading it reports a missing file with its own error.
    expect(locateTopology("./missing.yaml", dir)).toBe(join(dir, "missing.yaml"));
  });

  it("names where it looked and the topologies it found when a name is unknown", () => {
    const dir = folder("unknown-topology");
    const { code, message } = thrown(() => locateTopology("nope.yaml", dir));
    expect(code).toBe("TOPOLOGY_NOT_FOUND");
    expect(message).toBe(
      `[TOPOLOGY_NOT_FOUND] no topology named "nope": looked for nope.yaml in ${dir}, then for ` +
        `topologies/nope.yaml in ${dir} and its parents, then nope.yaml in kb's own ` +
        `${join(shippedDir(), "topologies")}. Topologies found in ${join(shippedDir(), "topologies")}: default, ` +
        "ref-4sip, ref-cube. Pass a topology name, or the path of a YAML file (./my-design.yaml).",
    );
  });

  it("suggests the nearest topology name found for a misspelt one", () => {
    const { message } = thrown(() => locateTopology("ref-cub", folder("misspelt-topology")));
    expect(message).toMatch(
      /^\[TOPOLOGY_NOT_FOUND\] no topology named "ref-cub" \(did you mean "ref-cube"\?\): /,
    );
  });
});
