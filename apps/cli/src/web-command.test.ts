import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { request } from "node:http";
import { createServer } from "node:net";
import { networkInterfaces, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { RunResultsSchema } from "@kb/runtime";
import type { WebData, WebTimelineWindow } from "@kb/web-ui/api";
import { energyByKind, energyHeadline } from "@kb/web-ui/energy-model";
import { loadWebData, startWebServer, type WebServer } from "@kb/web-ui/server";
import { Command } from "commander";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { topologyLookup } from "./bench-files.js";
import { kb } from "./test-support.js";
import { addWebCommand } from "./web-command.js";

const repo = (path: string) => fileURLToPath(new URL(`../../../${path}`, import.meta.url));
const defaultYaml = repo("topologies/default.yaml");
const copyBench = fileURLToPath(new URL("__fixtures__/copy-bench.ts", import.meta.url));

const scratch = mkdtempSync(join(tmpdir(), "kb-cli-web-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));
const file = (name: string, content: string) => {
  const path = join(scratch, name);
  writeFileSync(path, content);
  return path;
};

// A real run of a small bench: its results (kb run --json) and its trace (kb run --trace).
let resultsFile = "";
let traceFile = "";
beforeAll(async () => {
  traceFile = join(scratch, "copy.trace.json");
  const run = await kb("run", copyBench, "--topology", defaultYaml, "--json", "--trace", traceFile);
  expect(run.stderr).toBe("");
  expect(run.code).toBe(0);
  resultsFile = file("copy.json", run.stdout);
});

/** A page directory with an index.html and one asset. */
function pageDir(): string {
  const dir = join(scratch, "page");
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "index.html"), "<!doctype html><title>kb web test page</title>");
  writeFileSync(join(dir, "main.js"), "console.log('page');");
  return dir;
}

interface Response {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** A raw HTTP request (the path is sent as given: no normalisation by a client). */
function get(
  server: WebServer,
  path: string,
  options: { method?: string; host?: string; address?: string } = {},
): Promise<Response> {
  return new Promise((resolvePromise, reject) => {
    const req = request(
      {
        host: options.address ?? "127.0.0.1",
        port: server.port,
        path,
        method: options.method ?? "GET",
        headers: { host: options.host ?? `127.0.0.1:${server.port}` },
      },
      (res) => {
        let body = "";
        res.setEncoding("utf8");
        res.on("data", (chunk: string) => (body += chunk));
        res.on("end", () => resolvePromise({ status: res.statusCode ?? 0, headers: res.headers, body }));
      },
    );
    req.on("error", reject);
    req.end();
  });
}

describe("kb web: help", () => {
  it("kb web --help prints usage, the options with their defaults and examples", async () => {
    const help = await kb("web", "--help");
    expect(help.code).toBe(0);
    expect(help.stderr).toBe("");
    expect(help.stdout).toMatch(/^Usage: kb web \[options\] \[files\.\.\.\]/);
    for (const text of [
      "--topology <file>",
      "--port <n>",
      "(default: 8080)",
      "--host <address>",
      '(default: "127.0.0.1")',
      "Examples:",
    ]) {
      // Commander wraps the descriptions at 80 columns.
      expect(help.stdout.replace(/\s+/g, " ")).toContain(text);
    }
  });

  it("kb --help lists web", async () => {
    expect((await kb("--help")).stdout).toMatch(/\n {2}web \[options\] \[files\.\.\.\] +serve a local page/);
  });

  it("a bad port is a usage error", async () => {
    const run = await kb("web", "--port", "http");
    expect(run.code).toBe(1);
    expect(run.stderr).toContain("expected a port number from 0 to 65535");
  });
});

describe("loadWebData: files told apart by content", () => {
  it("reads a results file and a trace, in any order, and the topology", async () => {
    const { data, slices } = await loadWebData([traceFile, resultsFile], {
      topologies: topologyLookup,
      topology: defaultYaml,
    });
    expect(data.schema).toBe("kb.web/1");
    expect(data.results).toHaveLength(1);
    expect(data.results[0]).toMatchObject({ file: resultsFile, label: "copy.json" });
    expect(RunResultsSchema.parse(data.results[0]?.results).bench).toBe("copy");
    expect(data.timelines).toHaveLength(1);
    expect(data.timelines[0]?.tracks.length).toBeGreaterThan(0);
    expect(data.timelines[0]?.totalSlices).toBeGreaterThan(0);
    expect(slices[0]?.size).toBe(data.timelines[0]?.totalSlices);
    expect(data.topology).toMatchObject({ file: defaultYaml, name: "default" });
    expect(data.topology.nodes.filter((node) => node.kind === "pe")).toHaveLength(16);
    expect(data.topology.nodes).toHaveLength(229);
    expect(data.topology.edges).toHaveLength(532);
    expect(data.topology.nodes.find((node) => node.id === "sip0.cube1.pe5")).toEqual({
      id: "sip0.cube1.pe5",
      kind: "pe",
      impl: null,
      parent: "sip0.cube1",
      sip: 0,
      cube: 1,
      pe: 5,
      row: 1,
      col: 1,
    });
    expect(data.topology.edges[0]).toEqual({
      src: "host",
      dst: "sip0.io_cpu",
      bw: expect.any(Number),
      latencyNs: expect.any(Number),
    });
    expect(data.warnings).toEqual([]);
  });

  it("finds topologies/NAME.yaml of the results' topology without --topology", async () => {
    const { data } = await loadWebData([resultsFile], { topologies: topologyLookup, cwd: repo(".") });
    expect(data.topology.file).toBe(defaultYaml);
  });

  it("compares results of two topologies, saying so and naming both", async () => {
    const results = JSON.parse(readFileSync(resultsFile, "utf8"));
    const other = file("other.json", JSON.stringify({ ...results, topology: "ref-cube" }));
    const { data } = await loadWebData([resultsFile, other], {
      topologies: topologyLookup,
      topology: defaultYaml,
    });
    expect(data.results.map((entry) => entry.results.topology)).toEqual(["default", "ref-cube"]);
    expect(data.warnings).toEqual([
      `${other} ran on topology "ref-cube", the diagram draws "default" (${defaultYaml}): kb web compares the figures of runs on different topologies side by side (launches matched by position) and colours the diagram only where the ids match; to see "ref-cube" drawn, run kb web ${other} --topology with the YAML of "ref-cube".`,
    ]);
  });

  it("reads a trace in Chrome's array form", async () => {
    const events = [
      { name: "thread_name", ph: "M", pid: 1, tid: 1, args: { name: "sip0.io_cpu" } },
      { name: "work", ph: "X", ts: 1, dur: 2, pid: 1, tid: 1 },
    ];
    const { data, slices } = await loadWebData([file("array.json", JSON.stringify(events))], {
      topologies: topologyLookup,
      topology: defaultYaml,
    });
    expect(data.timelines[0]?.totalSlices).toBe(1);
    expect(slices[0]?.window(0, 3000, 3).slices).toEqual([0, 1000, 3000, 0]);
  });

  it("labels files by base name, by path when two share one", async () => {
    mkdirSync(join(scratch, "b"), { recursive: true });
    const second = join(scratch, "b", "copy.json");
    writeFileSync(second, readFileSync(resultsFile));
    const { data } = await loadWebData([resultsFile, second], {
      topologies: topologyLookup,
      topology: defaultYaml,
    });
    expect(data.results.map((entry) => entry.label)).toEqual([resultsFile, second]);
  });
});

describe("loadWebData: errors name the bad file", () => {
  const cases: [string, () => string, RegExp][] = [
    [
      "a missing file",
      () => join(scratch, "missing.json"),
      /^\[CLI_USAGE\] .*missing\.json: cannot read the file: ENOENT/,
    ],
    [
      "not JSON",
      () => file("broken.json", "{ nope"),
      /^\[CLI_USAGE\] .*broken\.json: not JSON: .*kb web reads results files/,
    ],
    [
      "another schema",
      () => file("future.json", JSON.stringify({ schema: "kb.results/2" })),
      /future\.json: a file of schema "kb\.results\/2", expected "kb\.results\/1"/,
    ],
    [
      "results that do not match the schema",
      () => file("cut.json", JSON.stringify({ schema: "kb.results/1", bench: "x" })),
      /cut\.json: not a valid results file \(schema "kb\.results\/1"\): params: .*Write it again with kb run --json/,
    ],
    [
      "neither kind",
      () => file("other-kind.json", JSON.stringify({ hello: 1 })),
      /other-kind\.json: neither a results file nor a trace\. kb web reads results files \(kb run --json > FILE/,
    ],
    [
      "a trace with a broken event",
      () => file("bad-trace.json", JSON.stringify({ traceEvents: [{ ph: "B", pid: 1, tid: 1 }] })),
      /bad-trace\.json:1: traceEvents\[0\] has no numeric ts, pid and tid/,
    ],
  ];
  for (const [what, make, message] of cases) {
    it(`${what}: kb web exits 1 with the file in the message`, async () => {
      const bad = make();
      await expect(
        loadWebData([resultsFile, bad], { topologies: topologyLookup, topology: defaultYaml }),
      ).rejects.toThrow(message);
      const run = await kb("web", resultsFile, bad, "--topology", defaultYaml, "--port", "0");
      expect(run.code).toBe(1);
      expect(run.stdout).toBe("");
      expect(run.stderr).toMatch(message);
    });
  }

  it("a bad topology is located as kb run reports it", async () => {
    const run = await kb("web", resultsFile, "--topology", join(scratch, "nope.yaml"));
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/TOPOLOGY_NOT_FOUND.*nope\.yaml/);
  });
});

describe("the server", () => {
  let server: WebServer;
  let data: WebData;
  beforeAll(async () => {
    const loaded = await loadWebData([resultsFile, traceFile], {
      topologies: topologyLookup,
      topology: defaultYaml,
    });
    data = loaded.data;
    server = await startWebServer({ data, slices: loaded.slices, pageDir: pageDir(), port: 0 });
  });
  afterAll(async () => {
    await server.close();
  });

  it("binds 127.0.0.1 by default, on a free port for --port 0", () => {
    expect(server.host).toBe("127.0.0.1");
    expect(server.port).toBeGreaterThan(0);
    expect(server.url).toBe(`http://127.0.0.1:${server.port}/`);
  });

  it("serves the data at /api/data", async () => {
    const response = await get(server, "/api/data");
    expect(response.status).toBe(200);
    expect(response.headers["content-type"]).toBe("application/json; charset=utf-8");
    expect(JSON.parse(response.body)).toEqual(JSON.parse(JSON.stringify(data)));
  });

  it("serves the run's energy at /api/data, which the energy section breaks down by kind", async () => {
    const served = JSON.parse((await get(server, "/api/data")).body) as WebData;
    const results = served.results[0]?.results;
    const energy = results?.energy;
    expect(energy?.totalJ).toBeGreaterThan(0);
    const kinds = energyByKind(results ?? {}) ?? [];
    // Every joule of the run is in one kind's bar (the links included), dynamic plus static.
    const sum = kinds.reduce((total, kind) => total + kind.totalJ, 0);
    expect(sum).toBeCloseTo(energy?.totalJ ?? 0, 15);
    expect(kinds.map((kind) => kind.name)).toEqual(expect.arrayContaining(["hbm_ctrl", "pe_dma", "links"]));
    for (const kind of kinds) expect(kind.dynamicJ + kind.staticJ).toBeCloseTo(kind.totalJ, 18);
    expect(energyHeadline(results ?? {})?.map((line) => line.label)).toEqual([
      "energy",
      "dynamic",
      "static",
      "average power",
      "energy-delay product",
      "per token",
      "logic scaled to",
    ]);
  });

  it("serves a window of a timeline at /api/timeline, every slice of the trace in the whole run", async () => {
    const timeline = data.timelines[0] as WebData["timelines"][number];
    const response = await get(server, `/api/timeline?trace=0&from=0&to=${timeline.endNs}&width=100`);
    expect(response.status).toBe(200);
    const window = JSON.parse(response.body) as WebTimelineWindow;
    expect(window).toMatchObject({ fromNs: 0, toNs: timeline.endNs, width: 100 });
    expect(window.sliceCount).toBe(timeline.totalSlices);
    expect(window.slices?.length).toBe(timeline.totalSlices * 4);
    expect(Buffer.from(window.busy, "base64")).toHaveLength(timeline.tracks.length * 100);
  });

  it("answers 400 for a window without numbers, 404 for a trace it does not have", async () => {
    const bad = await get(server, "/api/timeline?trace=0&from=0&to=x&width=10");
    expect(bad).toMatchObject({
      status: 400,
      body: "/api/timeline needs a number for to (trace, from, to, width)\n",
    });
    const missing = await get(server, "/api/timeline?trace=3&from=0&to=10&width=10");
    expect(missing).toMatchObject({ status: 404, body: "no trace 3: 1 given\n" });
  });

  it("serves the page and its assets, with a content security policy", async () => {
    const index = await get(server, "/");
    expect(index.status).toBe(200);
    expect(index.headers["content-type"]).toBe("text/html; charset=utf-8");
    expect(index.body).toContain("kb web test page");
    expect(index.headers["content-security-policy"]).toContain("default-src 'self'");
    const script = await get(server, "/main.js");
    expect(script.headers["content-type"]).toBe("text/javascript; charset=utf-8");
    const head = await get(server, "/main.js", { method: "HEAD" });
    expect(head).toMatchObject({ status: 200, body: "" });
  });

  it("answers 404 for what it does not have, and for paths that leave the page directory", async () => {
    expect((await get(server, "/nope.js")).status).toBe(404);
    // copy.json is a file beside the page directory: a server that followed `..` would send it.
    for (const path of ["/../copy.json", "/%2e%2e/copy.json", "/..%2fcopy.json", "/..%5ccopy.json", "/%00"]) {
      const response = await get(server, path);
      expect(response.status, path).toBe(404);
      expect(response.body).not.toContain("schema");
    }
  });

  it("answers only GET and HEAD", async () => {
    const response = await get(server, "/api/data", { method: "POST" });
    expect(response.status).toBe(405);
    expect(response.headers.allow).toBe("GET, HEAD");
  });

  it("bound to loopback, refuses requests for another host name (DNS rebinding)", async () => {
    expect((await get(server, "/api/data", { host: "evil.example:80" })).status).toBe(403);
    expect((await get(server, "/api/data", { host: `localhost:${server.port}` })).status).toBe(200);
  });

  it("a taken port is a usage error that says what to do", async () => {
    await expect(startWebServer({ data, pageDir: pageDir(), port: server.port })).rejects.toThrow(
      `[CLI_USAGE] kb web: port ${server.port} is in use: pass --port N, or --port 0 for any free port.`,
    );
  });
});

describe("the kb web command", () => {
  it("prints what it serves and where, serves until stopped, then says so", async () => {
    let stdout = "";
    let stderr = "";
    const io = {
      stdout: { write: (text: string) => (stdout += text) },
      stderr: { write: (text: string) => (stderr += text) },
    };
    const stop = new AbortController();
    let listening: WebServer | null = null;
    const program = new Command("kb").exitOverride();
    addWebCommand(program, io, {
      signal: stop.signal,
      pageDir: pageDir(),
      onListening: (server) => {
        listening = server;
      },
    });
    const done = program.parseAsync(
      ["web", resultsFile, traceFile, "--topology", defaultYaml, "--port", "0"],
      {
        from: "user",
      },
    );
    await expect.poll(() => listening, { timeout: 10_000 }).not.toBeNull();
    const server = listening as unknown as WebServer;
    expect(server.host).toBe("127.0.0.1");
    expect(stdout).toContain(`kb web: topology default (${defaultYaml}): 16 PE(s)\n`);
    expect(stdout).toContain(`kb web: results ${resultsFile}: bench copy on default\n`);
    expect(stdout).toMatch(/kb web: trace .*copy\.trace\.json: \d+ tracks, \d+ slices\n/);
    expect(stdout).toContain(`kb web: serving on http://127.0.0.1:${server.port}/ (Ctrl-C to stop)\n`);
    expect((await get(server, "/api/data")).status).toBe(200);
    stop.abort();
    await done;
    expect(stdout.endsWith("kb web: stopped\n")).toBe(true);
    expect(stderr).toBe("");
    // Closed: the port is free again.
    await new Promise<void>((resolvePromise, reject) => {
      const probe = createServer();
      probe.once("error", reject);
      probe.listen(server.port, "127.0.0.1", () => probe.close(() => resolvePromise()));
    });
  });
});

/** A non-loopback IPv4 address of this machine, if it has one. */
const lanAddress = Object.values(networkInterfaces())
  .flat()
  .find((entry) => entry !== undefined && entry.family === "IPv4" && !entry.internal)?.address;

describe("fault: kb web on a non-loopback address and the Host header (DNS rebinding)", () => {
  let data: WebData;
  beforeAll(async () => {
    data = (await loadWebData([resultsFile], { topologies: topologyLookup, topology: defaultYaml })).data;
  });

  it("--host 0.0.0.0 without --allow-host refuses to start, saying what to pass", async () => {
    const message =
      /^\[CLI_USAGE\] kb web: --host 0\.0\.0\.0 listens on every address of this machine, so the Host of a request is no proof it was meant for kb web .*Pass --allow-host NAME with each name or address the page is opened at/;
    await expect(startWebServer({ data, pageDir: pageDir(), host: "0.0.0.0", port: 0 })).rejects.toThrow(
      message,
    );
    await expect(startWebServer({ data, pageDir: pageDir(), host: "::", port: 0 })).rejects.toThrow(
      /--host :: listens on every address/,
    );
    const run = await kb("web", resultsFile, "--topology", defaultYaml, "--host", "0.0.0.0", "--port", "0");
    expect(run.code).toBe(1);
    expect(run.stdout).toBe("");
    expect(run.stderr).toMatch(message);
  });

  it("on 0.0.0.0 with --allow-host, answers the names allowed and localhost, refuses any other Host", async () => {
    const server = await startWebServer({
      data,
      pageDir: pageDir(),
      host: "0.0.0.0",
      port: 0,
      allowHosts: ["MyHost.Example", "192.0.2.7"],
    });
    try {
      for (const host of [
        "myhost.example",
        `myhost.example:${server.port}`,
        "192.0.2.7:80",
        `localhost:${server.port}`,
      ]) {
        expect((await get(server, "/api/data", { host })).status, host).toBe(200);
      }
      for (const host of [
        "evil.example",
        `evil.example:${server.port}`,
        `0.0.0.0:${server.port}`,
        "myhost.example.evil.example",
      ]) {
        const refused = await get(server, "/api/data", { host });
        expect(refused.status, host).toBe(403);
        expect(refused.body).not.toContain("schema");
      }
    } finally {
      await server.close();
    }
  });

  it.skipIf(lanAddress === undefined)(
    "on one non-loopback address, answers that address and refuses any other Host",
    async () => {
      const address = lanAddress as string;
      const server = await startWebServer({ data, pageDir: pageDir(), host: address, port: 0 });
      try {
        expect((await get(server, "/api/data", { address, host: `${address}:${server.port}` })).status).toBe(
          200,
        );
        expect((await get(server, "/api/data", { address, host: "evil.example" })).status).toBe(403);
      } finally {
        await server.close();
      }
    },
  );

  it("--allow-host takes names and addresses, repeated or in a comma list, never with a port", async () => {
    const help = await kb("web", "--help");
    const text = help.stdout.replace(/\s+/g, " ");
    expect(text).toContain("--allow-host <names>");
    expect(text).toContain("required with --host 0.0.0.0 or ::");
    expect(text).toContain("a wildcard address (0.0.0.0, ::) needs --allow-host");
    for (const bad of ["evil.example:80", "a b", "*", ""]) {
      const run = await kb("web", "--allow-host", bad, "--port", "0");
      expect(run.code, bad).toBe(1);
      expect(run.stderr).toContain("expected host names or addresses without a port");
    }
  });
});
