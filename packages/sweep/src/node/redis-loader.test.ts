import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { loadRedisSweep, type RedisSweep } from "./redis-loader.js";

// BullMQ and ioredis are optional peers of @kb/sweep: without them, `kb sweep --redis` and
// `kb worker` say what to install. The failures are Node's own: a module in a folder with no
// node_modules that imports the missing package (as dist/redis.js does in such an install),
// imported by a plain node process (vitest would resolve the package from the repository).

const dir = mkdtempSync(join(tmpdir(), "kb-redis-loader-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** An importer failing as Node does on a module (in the empty folder) that imports `name`. */
function importing(name: string): () => Promise<RedisSweep> {
  const file = join(dir, `imports-${name}.mjs`);
  writeFileSync(file, `import "${name}";\nexport const loaded = true;\n`);
  const script = `import(${JSON.stringify(pathToFileURL(file).href)}).then(() => console.log("{}"), (e) => console.log(JSON.stringify({ code: e.code, message: e.message })));`;
  const thrown = JSON.parse(
    execFileSync(process.execPath, ["--input-type=module", "-e", script], { encoding: "utf8" }),
  ) as { code?: string; message?: string };
  return () => Promise.reject(Object.assign(new Error(thrown.message), { code: thrown.code }));
}

describe("loadRedisSweep", { timeout: 60_000 }, () => {
  for (const peer of ["bullmq", "ioredis"]) {
    it(`says to install bullmq and ioredis when ${peer} is missing (SWEEP_QUEUE)`, async () => {
      const failure = await loadRedisSweep(importing(peer)).catch((error: unknown) => error);
      expect(failure).toMatchObject({ code: "SWEEP_QUEUE" });
      expect((failure as Error).message).toContain(
        "kb sweep --redis / kb worker need bullmq and ioredis: npm install bullmq ioredis",
      );
      expect((failure as Error).message).toContain(`${peer} was not found.`);
    });
  }

  it("lets another missing package's error through as it is", async () => {
    await expect(loadRedisSweep(importing("not-a-redis-peer"))).rejects.toMatchObject({
      code: "ERR_MODULE_NOT_FOUND",
      message: expect.stringContaining("not-a-redis-peer"),
    });
  });

  it("loads @kb/sweep/redis when they are installed", async () => {
    const redis = await loadRedisSweep();
    expect(typeof redis.RedisExecutor.open).toBe("function");
    expect(typeof redis.runWorker).toBe("function");
  });
});
