import { createHash } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { packageVersions } from "@kb/runtime/node";
import { type RunningRedis, redisSkipReason, runRedisTests, startRedis } from "@kb/tooling/node/redis";
import { Job, Queue } from "bullmq";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { kbBinJs, killAll, startKb } from "./sweep-redis-support.js";

// Faults of a hostile queue (issue 32): anyone who can write to a sweep's Redis adds jobs by hand
// (BullMQ, as here). A job named the bench by absolute or ../ path, or through a symlink out of
// the worker's --root, and kb worker imported that file (its top-level code ran before the "not a
// bench" check); a job key built a file name, so ../ wrote outside the worker's temp folder; a job
// without versions was run. Each is now refused before anything is imported, hashed or written,
// with a result that says why; the canary modules outside the root prove nothing was imported.

const haveKb = existsSync(kbBinJs);
if (!runRedisTests) console.warn(`kb worker fault tests skipped: ${redisSkipReason}`);

const scratch = mkdtempSync(join(tmpdir(), "kb-worker-faults-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");

/** A module outside the root whose top-level code writes `marker` when anything imports it. */
function canary(file: string, marker: string): string {
  const text = `import { writeFileSync } from "node:fs";\nwriteFileSync(${JSON.stringify(marker)}, "imported");\nexport default 1;\n`;
  writeFileSync(file, text);
  return text;
}

describe.skipIf(!runRedisTests || !haveKb)("fault: hand-made jobs on a kb worker's queue", () => {
  let redis: RunningRedis | undefined;

  beforeAll(async () => {
    redis = await startRedis({ dir: join(scratch, "redis") });
  }, 20_000);

  afterAll(async () => {
    await killAll();
    await redis?.stop();
  });

  it("refuses absolute, ../ and symlinked bench and plug-in paths, a bad key and missing versions, importing and writing nothing", async () => {
    const root = join(scratch, "root");
    const outside = join(scratch, "outside");
    const workerTmp = join(scratch, "tmp");
    for (const dir of [root, outside, workerTmp]) mkdirSync(dir);
    const marker = (name: string) => join(outside, `${name}.imported`);
    const benchText = canary(join(outside, "evil.mjs"), marker("bench"));
    const pluginText = canary(join(outside, "plug.mjs"), marker("plugin"));
    symlinkSync(join(outside, "evil.mjs"), join(root, "link.mjs"));
    // A harmless bench inside the root, for the jobs whose fault is elsewhere.
    const harmless = "export default 1;\n";
    writeFileSync(join(root, "bench.mjs"), harmless);

    const versions = packageVersions();
    const job = (overrides: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
      job: {
        point: 0,
        key: "a".repeat(64),
        bench: "./bench.mjs",
        benchDigest: sha256(harmless),
        inputs: { topology: { name: "t" }, params: {}, plugins: [] },
        run: { verify: false, memoryMb: 1024 },
        ...overrides,
      },
      pluginDigests: {},
      versions,
      ...extra,
    });
    const cases: [string, unknown, RegExp][] = [
      [
        "absolute-bench",
        job({ bench: join(outside, "evil.mjs"), benchDigest: sha256(benchText) }),
        /job\.bench: must be a bench name \(benches\/NAME\.ts\) or a path inside the worker's --root/,
      ],
      [
        "dotdot-bench",
        job({ bench: "../outside/evil.mjs", benchDigest: sha256(benchText) }),
        /job\.bench: must be a bench name .* \(got "\.\.\/outside\/evil\.mjs"\)/,
      ],
      [
        "symlink-bench",
        job({ bench: "./link.mjs", benchDigest: sha256(benchText) }),
        new RegExp(
          `refused point 0: its bench "\\./link\\.mjs" is a link to ${join(outside, "evil.mjs")}, which leads out of its --root`,
        ),
      ],
      [
        "absolute-plugin",
        job(
          { inputs: { topology: { name: "t" }, params: {}, plugins: [join(outside, "plug.mjs")] } },
          { pluginDigests: { [join(outside, "plug.mjs")]: sha256(pluginText) } },
        ),
        /job\.inputs\.plugins\[0\]: must be an npm package name or a path inside the worker's --root/,
      ],
      [
        "topology-plugin",
        job({
          inputs: { topology: { name: "t", plugins: ["../outside/plug.mjs"] }, params: {}, plugins: [] },
        }),
        /job\.inputs\.topology: plugins: must be at most 64 npm package names or paths inside the worker's --root/,
      ],
      [
        "bad-key",
        job({ key: "../../escaped-by-key" }),
        /job\.key: must be a point key: 64 lowercase hex digits \(got "\.\.\/\.\.\/escaped-by-key"\)/,
      ],
      ["no-versions", { ...job({}), versions: undefined }, /versions: .*expected record/i],
      ["unknown-field", job({}, { code: "console.log(1)" }), /its data: Unrecognized key: "code"/i],
      [
        "proto-key",
        JSON.parse(
          JSON.stringify(job({ inputs: { topology: { name: "t" }, params: {}, plugins: [] } })).replace(
            '"params":{}',
            '"params":{"__proto__":{"x":1}}',
          ),
        ),
        /job\.inputs\.params\.__proto__: the key "__proto__" is not allowed in a job/,
      ],
    ];

    const url = redis?.url ?? "";
    const worker = startKb(["worker", "--redis", url, "--queue", "hostile", "--root", root], {
      TMPDIR: workerTmp,
    });
    await worker.waitForStderr(/taking points of queue/, 15_000);
    const queue = new Queue("hostile", { connection: { host: "127.0.0.1", port: redis?.port ?? 0 } });
    try {
      for (const [name, data] of cases) await queue.add(`point-${name}`, data, { jobId: name });
      for (const [name, , reason] of cases) {
        let found: Job | undefined;
        const deadline = performance.now() + 30_000;
        while (performance.now() < deadline) {
          found = await Job.fromId(queue, name);
          if (found?.finishedOn !== undefined) break;
          await new Promise((done) => setTimeout(done, 100));
        }
        expect(found?.returnvalue, `${name}: ${worker.stderr()}`).toMatchObject({ status: "failed" });
        const outcome = found?.returnvalue as { reason: string };
        expect(outcome.reason, name).toMatch(/^kb worker on .+ refused (job "[a-z-]+"|point 0): /);
        expect(outcome.reason, name).toMatch(reason);
      }
    } finally {
      await queue.close();
    }
    // Nothing imported, nothing written outside the worker's temp folder.
    expect(readdirSync(outside).sort()).toEqual(["evil.mjs", "plug.mjs"]);
    expect(existsSync(join(scratch, "escaped-by-key.yaml"))).toBe(false);
    expect(worker.stderr()).toMatch(/\nkb worker on .+ refused job "absolute-bench": job\.bench: must be/);
    worker.signalGroup("SIGTERM");
    expect(await worker.exited).toBe(143);
  }, 60_000);
});
