import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { readOpLog } from "@kb/oplog/node";
import { RunResultsSchema } from "@kb/runtime";
import { afterAll, describe, expect, it } from "vitest";
import { formatNs } from "./format-run.js";
import { runKb } from "./test-support.js";

const fixture = (name: string) => fileURLToPath(new URL(`__fixtures__/${name}`, import.meta.url));
const defaultYaml = fileURLToPath(new URL("../../../topologies/default.yaml", import.meta.url));
const copyBench = fixture("copy-bench.ts");

const run = (...argv: string[]) => runKb(["run", ...argv]);

const scratch = mkdtempSync(join(tmpdir(), "kb-cli-run-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** Runs `body` with the working directory set to `dir` (kb looks names up from there). */
async function inDirectory<T>(dir: string, body: () => Promise<T>): Promise<T> {
  const previous = process.cwd();
  process.chdir(dir);
  try {
    return await body();
  } finally {
    process.chdir(previous);
  }
}

describe("kb run: help", () => {
  it("kb run --help prints usage, every option and an example", async () => {
    const help = await run("--help");
    expect(help.code).toBe(0);
    expect(help.stderr).toBe("");
    expect(help.stdout).toMatch(/^Usage: kb run \[options\] <bench>\n/);
    for (const option of [
      "--topology <file|name>",
      "--param <key=value>",
      "--json",
      "--trace <file>",
      "--trace-counter-ns <ns>",
      "--oplog <file>",
      "--plugin <package...>",
    ]) {
      expect(help.stdout).toContain(option);
    }
    expect(help.stdout).toContain("Examples:\n  kb run gemm --param M=512 --param dtype=bf16\n");
  });

  it("kb --help lists run", async () => {
    expect((await runKb(["--help"])).stdout).toMatch(
      /\n {2}run \[options\] <bench> +run a bench on a topology/,
    );
  });
});

describe("kb run: the summary", () => {
  it("prints bench, topology, params, simulated time, throughput, utilisation and outputs", async () => {
    const human = await run(copyBench, "--topology", defaultYaml);
    expect(human.stderr).toBe("");
    expect(human.code).toBe(0);
    const results = RunResultsSchema.parse(JSON.parse((await run(copyBench, "--json")).stdout));
    const out = human.stdout;
    expect(out).toMatch(/^bench copy on topology default\n/);
    expect(out).toContain('  params          {"rows":64,"cols":64,"dtype":"f16"}\n');
    expect(out).toContain(`  simulated time  ${formatNs(results.simTimeNs)}\n`);
    expect(out).toMatch(/simulated time {2}\d+(\.\d+)? (ns|µs)\n/);
    expect(out).toMatch(/\n {2}events {10}\d[\d,]* in \d+ ms wall \([\d.]+ k?events\/s; machine built in/);
    // The launch over its kernel window, the host copies on their own line, then the whole run.
    const launch = results.launches[0];
    expect(launch).toBeDefined();
    expect(out).toContain(
      `launches (each over its kernel window, against the peaks of the hardware it used)\n  copy           1 PE(s), ${formatNs(launch?.startNs ?? 0)} -> `,
    );
    expect(out).toMatch(/\n {4}HBM {10}16 KiB, [\d.]+ [kMG]?B\/s of [\d.]+ GB\/s peak \([\d.]+%\)\n/);
    expect(out).toContain("\n    HBM minimal  16 KiB distinct (8 KiB read, 8 KiB written): 1 x moved\n");
    expect(out).toMatch(
      /\n {4}roofline {5}[\d.]+ ns, hbm-bound \(the launch took [\d.]+ x that\); with minimal traffic/,
    );
    expect(out).toContain(
      `\n  host copies    1 copy, 8 KiB in ${formatNs(results.hostCopies?.ns ?? Number.NaN)} (outside the kernel windows)\n`,
    );
    expect(out).toContain(
      "\nwhole run (simulated time, host copies included; against the peaks the run used)\n",
    );
    expect(out).toMatch(/\n {2}HBM {12}[\d.]+ [kMG]?B\/s of [\d.]+ GB\/s peak \([\d.]+%\)\n/);
    expect(out).toContain("  GEMM           none (no GEMM work)\n");
    expect(out).toContain("\n  roofline time  ");
    // Only kinds that did work: the copy uses no GEMM or MATH engine.
    expect(out).toMatch(/\n {2}kind +count +busy +util +max +min +lane max +ops +bytes\n/);
    // Two stacks, one used: mean u/2, max u, min 0%, the busiest lane a pseudo-channel.
    expect(out).toMatch(
      /\n {2}hbm_ctrl +2 +[\d.]+ (ns|µs) +[\d.]+% +[\d.]+% +0\.0% +[\d.]+% pc\d+ +\d+ +24 KiB\n/,
    );
    expect(out).not.toMatch(/\n {2}pe_gemm /);
    expect(out).toContain("busiest component of each kind\n  component ");
    expect(out).toContain("  sip0.cube0.pe0.pe_dma ");
    expect(out).toContain(
      "outputs\n  dst  f16 [64, 64]\nverification: not run (add --verify to replay the op log and check the outputs)\n",
    );
  });

  it("--json prints only the results, valid against RunResultsSchema, byte-identical on every run", async () => {
    const first = await run(copyBench, "--json", "--topology", defaultYaml);
    const second = await run(copyBench, "--json", "--topology", defaultYaml);
    expect(first.code).toBe(0);
    expect(first.stderr).toBe("");
    expect(second.stdout).toBe(first.stdout);
    expect(first.stdout.endsWith("}\n")).toBe(true);
    const results = RunResultsSchema.parse(JSON.parse(first.stdout));
    expect(results).toMatchObject({
      bench: "copy",
      topology: "default",
      params: { rows: 64, cols: 64, dtype: "f16" },
      launches: [{ name: "copy", pes: 1 }],
    });
    expect(results.simTimeNs).toBeGreaterThan(0);
    expect(first.stdout).not.toContain(scratch);
    // The bench's path appears only as its kernel's lines (launches[].sites, relative to the working directory).
    const withoutSites = { ...results, launches: results.launches.map(({ sites: _, ...launch }) => launch) };
    expect(JSON.stringify(withoutSites)).not.toContain("__fixtures__");
    expect(results.launches[0]?.sites?.lines[0]?.line).toMatch(
      /^apps\/cli\/src\/__fixtures__\/copy-bench\.ts:\d+$/,
    );
  });

  it("--param reaches the bench: twice the rows, twice the HBM bytes", async () => {
    const base = RunResultsSchema.parse(JSON.parse((await run(copyBench, "--json")).stdout));
    const tall = await run(copyBench, "--json", "--param", "rows=128", "--param", "dtype=f16");
    expect(tall.code).toBe(0);
    const results = RunResultsSchema.parse(JSON.parse(tall.stdout));
    expect(results.params).toEqual({ rows: 128, cols: 64, dtype: "f16" });
    // The tensor is written by the host, loaded and stored: each moves its bytes through HBM.
    expect(base.work.hbmBytes).toBeGreaterThanOrEqual(2 * 64 * 64 * 2);
    expect(results.work.hbmBytes).toBe(2 * base.work.hbmBytes);
    expect(results.simTimeNs).toBeGreaterThan(base.simTimeNs);
  });

  it("a bench name is looked up in benches/ of the working directory's parents; the default topology comes with kb", async () => {
    // A project outside the repository, without node_modules: the bench's imports of
    // @kb/runtime, @kb/tl and zod are the CLI's own.
    const project = join(scratch, "project");
    mkdirSync(join(project, "benches"), { recursive: true });
    mkdirSync(join(project, "work", "deeper"), { recursive: true });
    copyFileSync(copyBench, join(project, "benches", "alpha.ts"));
    copyFileSync(copyBench, join(project, "benches", "beta.ts"));
    copyFileSync(copyBench, join(project, "benches", "alpha.test.ts"));
    const found = await inDirectory(join(project, "work", "deeper"), () => run("alpha", "--json"));
    expect(found.stderr).toBe("");
    expect(found.code).toBe(0);
    expect(RunResultsSchema.parse(JSON.parse(found.stdout))).toMatchObject({
      bench: "copy",
      topology: "default",
    });

    const missing = await inDirectory(join(project, "work", "deeper"), () => run("gamma"));
    expect(missing.code).toBe(1);
    expect(missing.stdout).toBe("");
    expect(missing.stderr).toMatch(
      /^\[RUNTIME_INVALID\] no bench named "gamma": looked for benches\/gamma\.ts in /,
    );
    expect(missing.stderr).toContain(`Benches found in ${join(project, "benches")}: alpha, beta`);
    expect(missing.stderr).not.toContain("alpha.test");
    expect(missing.stderr).toContain("pass the path of its file: kb run ./my-bench.ts.");
  });
});

describe("kb run: bad input exits 1 with a located message", () => {
  it("a bad param value names the param and lists the bench's params", async () => {
    const bad = await run(copyBench, "--param", "rows=many");
    expect(bad.code).toBe(1);
    expect(bad.stdout).toBe("");
    expect(bad.stderr).toMatch(/^\[RUNTIME_INVALID\] bench "copy": bad params:\n {2}rows: /);
    expect(bad.stderr).toContain('Its params: rows (default 64), cols (default 64), dtype (default "f16").');
  });

  it("a misspelt param is an error, not silently dropped", async () => {
    const bad = await run(copyBench, "--param", "rowz=128");
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(
      /^\[RUNTIME_INVALID\] bench "copy": bad params:\n {2}rowz: not a param of this bench \(did you mean rows\?\)\n/,
    );
  });

  it("a --param without = is a usage error", async () => {
    expect(await run(copyBench, "--param", "rows")).toEqual({
      code: 1,
      stdout: "",
      stderr:
        "error: option '--param <key=value>' argument 'rows' is invalid. expected key=value, such as M=512 or dtype=bf16.\n" +
        "(see kb run --help)\n",
    });
  });

  it("a bench file that is not found, or does not default-export a bench, is named", async () => {
    const missing = await run("./no-such-bench.ts");
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(
      /^\[RUNTIME_INVALID\] \.\/no-such-bench\.ts: bench file \.\/no-such-bench\.ts not found/,
    );

    const notBench = fixture("not-a-bench.ts");
    const wrong = await run(notBench);
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toBe(
      `[RUNTIME_INVALID] ${notBench}: its default export is an object with keys name, not a bench (named exports: rows). ` +
        "A bench file must `export default defineBench({ name, params, async run(sim, params) {...} })` with defineBench from @kb/runtime.\n",
    );
  });

  it("a bench file that does not compile is named with the line of the error", async () => {
    const file = join(scratch, "broken-bench.ts");
    writeFileSync(
      file,
      'import { defineBench } from "@kb/runtime";\nexport default defineBench({ name: "x", params: , });\n',
    );
    const failed = await run(file);
    expect(failed.code).toBe(1);
    expect(failed.stderr).toMatch(/^\[RUNTIME_INVALID\] .*broken-bench\.ts: cannot load the bench file: /);
    expect(failed.stderr).toContain(`${file}:2:`);
  });

  it("a kernel that throws names the kernel and the PE", async () => {
    const failed = await run(fixture("throwing-kernel-bench.ts"));
    expect(failed.code).toBe(1);
    expect(failed.stdout).toBe("");
    expect(failed.stderr).toMatch(
      /^\[KERNEL_FAILED\] kernel explode on sip0\.cube0\.pe1 at t=[\d.]+ ns: the kernel threw: boom\n$/,
    );
  });

  it("an error thrown by the bench's host code is the bench's (exit 1), with its stack", async () => {
    const file = fixture("host-throws-bench.ts");
    const failed = await run(file);
    expect(failed.code).toBe(1);
    expect(failed.stderr).toMatch(
      new RegExp(
        `^\\[RUNTIME_INVALID\\] ${file.replace(/[.]/g, "\\.")}: bench "host-throws" threw: Error: host boom\n`,
      ),
    );
    expect(failed.stderr).toContain(`${file}:`);
    expect(failed.stderr).not.toContain("internal error");
  });

  it("a missing topology file is the topology package's error", async () => {
    const missing = join(scratch, "nowhere.yaml");
    const failed = await run(copyBench, "--topology", missing);
    expect(failed.code).toBe(1);
    expect(failed.stderr).toMatch(/^\[TOPOLOGY_NOT_FOUND\] /);
    expect(failed.stderr).toContain(missing);
  });
});

describe("kb run: output files", () => {
  it("--trace writes Chrome trace-event JSON, the same on every run", async () => {
    const first = join(scratch, "first.trace.json");
    const second = join(scratch, "second.trace.json");
    expect((await run(copyBench, "--trace", first)).code).toBe(0);
    expect((await run(copyBench, "--trace", second, "--json")).code).toBe(0);
    const text = readFileSync(first, "utf8");
    const trace = JSON.parse(text) as {
      traceEvents: { ph: string; name: string }[];
      displayTimeUnit: string;
    };
    expect(trace.displayTimeUnit).toBe("ns");
    expect(trace.traceEvents.some((event) => event.ph === "B")).toBe(true);
    expect(trace.traceEvents.some((event) => event.ph === "M" && event.name === "thread_name")).toBe(true);
    expect(readFileSync(second, "utf8")).toBe(text);
    expect(readdirSync(scratch).filter((name) => name.includes(".tmp-"))).toEqual([]);
  });

  it("--oplog writes JSONL op records that the op-log reader accepts", async () => {
    const file = join(scratch, "copy.oplog.jsonl");
    const done = await run(copyBench, "--oplog", file, "--json");
    expect(done.code).toBe(0);
    const records = readOpLog(file);
    expect(records.length).toBeGreaterThan(0);
    expect(records.map((record) => record.op_kind)).toContain("memory");
    expect(readFileSync(file, "utf8").split("\n").length).toBe(records.length + 1);
    expect(readdirSync(scratch).filter((name) => name.includes(".tmp-"))).toEqual([]);
  });

  it("a failed run leaves neither the trace nor the op log, nor their temporary files", async () => {
    const dir = mkdtempSync(join(scratch, "failed-"));
    const failed = await run(
      fixture("throwing-kernel-bench.ts"),
      "--trace",
      join(dir, "t.json"),
      "--oplog",
      join(dir, "o.jsonl"),
    );
    expect(failed.code).toBe(1);
    expect(readdirSync(dir)).toEqual([]);
  });

  it("an output file in a directory that does not exist fails before the run", async () => {
    const failed = await run(copyBench, "--trace", join(scratch, "no-dir", "t.json"));
    expect(failed.code).toBe(1);
    expect(failed.stderr).toMatch(
      /^\[CLI_USAGE\] .*--trace .*the directory .*no-dir does not exist; create it first/,
    );
    expect(existsSync(join(scratch, "no-dir"))).toBe(false);
  });
});

describe("kb run: progress", () => {
  it("prints nothing on stderr when it is not a terminal", async () => {
    const piped = await run(copyBench);
    expect(piped.code).toBe(0);
    expect(piped.stderr).toBe("");
  });

  it("shows one updating line on a terminal, cleared at the end, without changing the results", async () => {
    const tty = await runKb(["run", copyBench], { isTTY: true, columns: 100 });
    const piped = await run(copyBench);
    expect(tty.code).toBe(0);
    const clearLine = "\r\x1b[K";
    expect(tty.stderr.startsWith(`${clearLine}copy: building the machine of `)).toBe(true);
    expect(tty.stderr).toContain(`${clearLine}copy: running`);
    expect(tty.stderr.endsWith(clearLine)).toBe(true);
    expect(tty.stderr).not.toContain("\n");
    const lines = (text: string) => text.split("\n").filter((line) => !line.includes(" wall "));
    expect(lines(tty.stdout)).toEqual(lines(piped.stdout));
  });

  it("with --verify, shows each reference's progress on the line; the summary times references apart", async () => {
    const tty = await runKb(["run", copyBench, "--topology", defaultYaml, "--verify"], {
      isTTY: true,
      columns: 100,
    });
    expect(tty.code).toBe(0);
    const clearLine = "\r\x1b[K";
    expect(tty.stderr).toContain(`${clearLine}copy: phase 2, replaying 2 ops`);
    // The copy bench's reference reports nothing itself: its start and its end are shown.
    expect(tty.stderr).toContain(`${clearLine}copy: reference dst, 0%${clearLine}copy: reference dst, 100%`);
    expect(tty.stderr.endsWith(clearLine)).toBe(true);
    expect(tty.stdout).toMatch(/; references computed in \d+ ms, compared in \d+ ms\)\n/);
  });

  it("never with --json, even on a terminal", async () => {
    const json = await runKb(["run", copyBench, "--json"], { isTTY: true, columns: 100 });
    expect(json.code).toBe(0);
    expect(json.stderr).toBe("");
  });
});

describe("kb run --verify", () => {
  it("replays the op log, prints the verification table and exits 0 on PASS", async () => {
    const result = await run(copyBench, "--topology", defaultYaml, "--verify");
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/verification \(phase 2: 2 ops replayed in /);
    expect(result.stdout).toMatch(/dst\s+f16\s+\[64, 64\]/);
    expect(result.stdout).toMatch(/PASS/);
    expect(result.stdout).not.toMatch(/verification: not run/);
    const json = await run(copyBench, "--topology", defaultYaml, "--verify", "--json");
    const results = RunResultsSchema.parse(JSON.parse(json.stdout));
    expect(results.verification?.pass).toBe(true);
    expect(results.verification?.outputs[0]).toMatchObject({ name: "dst", mismatches: 0, maxAbsError: 0 });
  });

  it("exits 1 on FAIL and names the first mismatching index", async () => {
    const result = await run(fixture("shifted-copy-bench.ts"), "--topology", defaultYaml, "--verify");
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(/FAIL/);
    // dst row 0 holds src row 1: the first element already differs.
    expect(result.stdout).toMatch(/\[0, 0\]/);
    const json = await run(fixture("shifted-copy-bench.ts"), "--topology", defaultYaml, "--verify", "--json");
    expect(json.code).toBe(1);
    const results = RunResultsSchema.parse(JSON.parse(json.stdout));
    expect(results.verification?.outputs[0]?.firstMismatch?.index).toEqual([0, 0]);
  });
});

describe("kb run --verify: NaN and Inf", () => {
  const nanBench = fixture("nan-bench.ts");

  it("counts the NaN of an all-NaN output, gives the first index and names the op and PE that produced it", async () => {
    const oplogFile = join(scratch, "nan.oplog.jsonl");
    const result = await run(nanBench, "--topology", defaultYaml, "--verify", "--oplog", oplogFile);
    expect(result.stderr).toBe("");
    expect(result.code).toBe(1);
    // Every element is log of a negative number: 32 NaN of 4 x 8, the first at [0, 0], where the
    // reference is log 1 = 0. A NaN has no error, so the maxima say NaN, never a reassuring 0.
    const table = result.stdout.slice(result.stdout.indexOf("\noutput "));
    expect(table).toMatch(
      /\noutput +dtype +shape +non-finite +max abs err +max rel err +mismatches +first mismatch +tolerance +result\n/,
    );
    expect(table).toMatch(
      /\nout +f32 +\[4, 8\] +32 NaN \(first \[0, 0\]\) +NaN +NaN +32 of 32 +\[0, 0\] actual NaN, expected 0 +rtol 0\.00001 atol 0\.00001 +FAIL\n/,
    );
    // The first record that produced a non-finite value is the first `log` of the op log (the
    // `mul` before it is finite, the copies only move values): the replay keeps math in log order.
    const records = readOpLog(oplogFile);
    const log = records.find((record) => record.op_name === "log");
    if (log === undefined || log.op_kind !== "math") throw new Error("no log record in the op log");
    expect(log.component_id).toMatch(/^sip0\.cube0\.pe[01]\.pe_math$/);
    expect(table).toContain(
      `\nfirst non-finite value: op ${log.id} (log on ${log.component_id} at t=${log.t_start} ns), NaN at element 0 of its output\n`,
    );
    expect(table.endsWith("\nFAIL: 1 of 1 output does not match (out)\n")).toBe(true);
    expect(table).not.toMatch(/reference out has/);

    const json = await run(nanBench, "--topology", defaultYaml, "--verify", "--json");
    expect(json.code).toBe(1);
    const verification = RunResultsSchema.parse(JSON.parse(json.stdout)).verification;
    expect(verification?.outputs[0]).toMatchObject({
      name: "out",
      pass: false,
      mismatches: 32,
      maxAbsError: null,
      firstMismatch: { index: [0, 0], actual: null, expected: 0 },
      actualNonFinite: { nan: 32, posInf: 0, negInf: 0, first: { index: [0, 0], value: "NaN" } },
      referenceNonFinite: { nan: 0, posInf: 0, negInf: 0, first: null },
    });
    expect(verification?.firstNonFinite).toEqual({
      id: log.id,
      opName: "log",
      opKind: "math",
      componentId: log.component_id,
      tStartNs: log.t_start,
      dst: log.params.dst_addr,
      index: 0,
      value: "NaN",
      inputNonFinite: false,
    });
  });

  it("a passing run has no non-finite values and names no op", async () => {
    const result = await run(copyBench, "--topology", defaultYaml, "--verify");
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(
      /\ndst +f16 +\[64, 64\] +0 +0 +0 +0 of 4096 +- +rtol 0\.001 atol 0\.001 +PASS\n/,
    );
    expect(result.stdout).not.toContain("first non-finite value");
    const json = await run(copyBench, "--topology", defaultYaml, "--verify", "--json");
    const verification = RunResultsSchema.parse(JSON.parse(json.stdout)).verification;
    expect(verification?.firstNonFinite).toBeNull();
    expect(verification?.outputs[0]?.actualNonFinite).toEqual({ nan: 0, posInf: 0, negInf: 0, first: null });
  });
});

describe("kb run --trace-filter", () => {
  it("keeps the components a glob matches, in a window of simulated time", async () => {
    const file = join(scratch, "filtered.trace.json");
    const result = await run(
      copyBench,
      "--topology",
      defaultYaml,
      "--trace",
      file,
      "--trace-filter",
      "**.pe_dma@0-2000",
    );
    expect(result.code).toBe(0);
    const trace = JSON.parse(readFileSync(file, "utf8")) as {
      traceEvents: { name: string; ph: string; ts: number; args?: { name?: string } }[];
    };
    const threads = trace.traceEvents.filter((e) => e.name === "thread_name").map((e) => e.args?.name);
    expect(threads.length).toBeGreaterThan(0);
    expect(
      threads.every((name) => String(name).endsWith(".pe_dma") || String(name).includes(".pe_dma#")),
    ).toBe(true);
    expect(trace.traceEvents.every((e) => e.ts <= 2)).toBe(true);
    const bad = await run(copyBench, "--topology", defaultYaml, "--trace", file, "--trace-filter", "**@soon");
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/expected GLOB@FROM-TO/);
  });
});
