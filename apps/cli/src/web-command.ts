import { existsSync, readFileSync, statSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { isIP } from "node:net";
import { basename, dirname, extname, join, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { KbError } from "@kb/errors";
import { type RunResults, RunResultsSchema } from "@kb/runtime";
import { loadTopologyGraphFile } from "@kb/topology/node";
import { type Command, InvalidArgumentError } from "commander";
import { groupDigits } from "./format-run.js";
import type { CliIo } from "./run-cli.js";

// -------------------------------------------------------------------------------------------------
// The data the page reads from GET /api/data. The page declares the same shape in
// apps/web/src/api.ts (it cannot import this file); the end-to-end test renders one from the other.

/** Everything `kb web` serves at `/api/data`. */
export interface WebData {
  readonly schema: "kb.web/1";
  /** The expanded topology the diagram draws. */
  readonly topology: WebTopology;
  /** The results files given, in order (`kb run --json` output). */
  readonly results: readonly WebResults[];
  /** The trace files given, in order, as timelines. */
  readonly timelines: readonly WebTimeline[];
  /** Things the user should know (results of another topology, trace tracks not in it). */
  readonly warnings: readonly string[];
}

/** The expanded topology graph: every node (containers and components) and every directed edge. */
export interface WebTopology {
  /** The YAML file, as given or found. */
  readonly file: string;
  readonly name: string;
  readonly nodes: readonly WebNode[];
  readonly edges: readonly WebEdge[];
}

/** A node of the expanded graph (see `TopologyNode` of @kb/topology). */
export interface WebNode {
  readonly id: string;
  readonly kind: string;
  readonly impl: string | null;
  readonly parent: string | null;
  readonly sip: number | null;
  readonly cube: number | null;
  readonly pe: number | null;
  /** NOC grid position of routers, PEs and PE components, else null. */
  readonly row: number | null;
  readonly col: number | null;
}

/** A directed edge; a bidirectional link is two. */
export interface WebEdge {
  readonly src: string;
  readonly dst: string;
  /** Bandwidth, GB/s. */
  readonly bw: number;
  readonly latencyNs: number;
}

/** One results file. */
export interface WebResults {
  readonly file: string;
  /** A short name for legends: the file's base name (its path when two share one). */
  readonly label: string;
  readonly results: RunResults;
}

/**
 * One trace file as a timeline: a track per component (Chrome thread), the slices of every
 * track, the launch markers and the counters. Times are simulated ns.
 */
export interface WebTimeline {
  readonly file: string;
  readonly label: string;
  /** The last timestamp of the trace, ns. */
  readonly endNs: number;
  /** Tracks by process (cube) in trace order, then by name: `name` is the component id (a lane as `id#lane`), `group` its process. */
  readonly tracks: readonly { readonly name: string; readonly group: string }[];
  /** Slice names, referenced by index from `slices`. */
  readonly names: readonly string[];
  /** Slices, flat: `track, startNs, endNs, nameIndex` per slice, in start order. */
  readonly slices: readonly number[];
  /** Slices in the trace; more than `slices.length / 4` when the timeline was cut at {@link MAX_TIMELINE_SLICES}. */
  readonly totalSlices: number;
  /** Launch and launch-complete instants. */
  readonly markers: readonly { readonly tNs: number; readonly label: string }[];
  /** Counter series (`HBM GB/s`, `queue depth`): `points` flat as `tNs, value` pairs. */
  readonly counters: readonly { readonly name: string; readonly track: string; readonly points: number[] }[];
}

/** Slices kept per timeline: a canvas timeline stays responsive up to about this many. */
export const MAX_TIMELINE_SLICES = 200_000;

/** Counter points kept per timeline. */
export const MAX_TIMELINE_COUNTER_POINTS = 200_000;

// -------------------------------------------------------------------------------------------------
// The command

/** Options of `kb web` as commander parses them. */
interface WebOptions {
  topology?: string;
  port: number;
  host: string;
}

/** What tests and embedding tools can pass to {@link addWebCommand}. */
export interface WebCommandHooks {
  /** Stops the server when aborted (besides SIGINT and SIGTERM). */
  readonly signal?: AbortSignal;
  /** The built page to serve (default: found beside kb, see {@link findPageDir}). */
  readonly pageDir?: string;
  /** Called once the server listens. */
  readonly onListening?: (server: WebServer) => void;
}

/** The default port of `kb web`. */
export const DEFAULT_WEB_PORT = 8080;

/** Adds `kb web [FILES...]` to the program. */
export function addWebCommand(program: Command, io: CliIo, hooks: WebCommandHooks = {}): Command {
  return program
    .command("web")
    .summary("serve a local page: topology diagram, timeline, charts, verification, comparison")
    .description(
      "Serve a local page that shows the topology as a diagram (SIP -> cube -> PE, HBM channels, " +
        "links) coloured by the utilisation of a results file, the timeline of a trace, the " +
        "utilisation and bandwidth by component kind, the verification table of a --verify run, and " +
        "a side-by-side comparison of two results files (two design points). FILES are results " +
        "files (kb run --json > FILE) and traces (kb run --trace FILE), told apart by their content. " +
        "Runs until Ctrl-C.",
    )
    .argument("[files...]", "results JSON files and Chrome trace JSON files, in any order")
    .option(
      "--topology <file>",
      "topology YAML the diagram draws (default: topologies/NAME.yaml for the topology NAME of the first results file when there is one, else topologies/default.yaml; looked up like kb run's)",
    )
    .option("--port <n>", "port to listen on (0: any free port)", parsePort, DEFAULT_WEB_PORT)
    .option(
      "--host <address>",
      "address to bind; anything but a loopback address shows your results to the network",
      "127.0.0.1",
    )
    .addHelpText(
      "after",
      "\nExamples:\n" +
        "  kb run gemm --json --trace gemm.trace.json > gemm.json\n" +
        "  kb web gemm.json gemm.trace.json            # then open http://127.0.0.1:8080/\n" +
        "  kb web small.json big.json --port 0         # compare two design points on a free port\n" +
        "  kb web ref.json --topology topologies/ref-cube.yaml",
    )
    .action(async (files: string[], options: WebOptions) => {
      const data = loadWebData(files, {
        ...(options.topology !== undefined ? { topology: options.topology } : {}),
        cwd: process.cwd(),
      });
      const pageDir = hooks.pageDir ?? findPageDir();
      const server = await startWebServer({ data, pageDir, host: options.host, port: options.port });
      const warnings = isLoopback(options.host)
        ? data.warnings
        : [
            ...data.warnings,
            `listening on ${options.host}, not a loopback address: anyone who can reach this machine can read the page and its results.`,
          ];
      for (const warning of warnings) io.stderr.write(`kb web: warning: ${warning}\n`);
      io.stdout.write(`${describeData(data)}kb web: serving on ${server.url} (Ctrl-C to stop)\n`);
      hooks.onListening?.(server);
      await stopRequested(hooks.signal);
      await server.close();
      io.stdout.write("kb web: stopped\n");
    });
}

function parsePort(value: string): number {
  const port = Number(value);
  if (!/^\d+$/.test(value) || port > 65535) {
    throw new InvalidArgumentError("expected a port number from 0 to 65535 (0: any free port).");
  }
  return port;
}

/** What the server read, for the terminal. */
function describeData(data: WebData): string {
  const { topology } = data;
  const pes = topology.nodes.filter((node) => node.kind === "pe").length;
  const lines = [`kb web: topology ${topology.name} (${topology.file}): ${pes} PE(s)`];
  for (const entry of data.results) {
    lines.push(
      `kb web: results ${entry.file}: bench ${entry.results.bench ?? "(none)"} on ${entry.results.topology}`,
    );
  }
  for (const timeline of data.timelines) {
    const kept = timeline.slices.length / 4;
    const cut = kept < timeline.totalSlices ? ` (the first ${groupDigits(kept)} shown)` : "";
    lines.push(
      `kb web: trace ${timeline.file}: ${groupDigits(timeline.tracks.length)} tracks, ${groupDigits(timeline.totalSlices)} slices${cut}`,
    );
  }
  return `${lines.join("\n")}\n`;
}

/** Resolves on SIGINT, SIGTERM or when `signal` aborts. */
function stopRequested(signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolvePromise) => {
    const stop = () => {
      process.off("SIGINT", stop);
      process.off("SIGTERM", stop);
      signal?.removeEventListener("abort", stop);
      resolvePromise();
    };
    if (signal?.aborted === true) {
      stop();
      return;
    }
    process.once("SIGINT", stop);
    process.once("SIGTERM", stop);
    signal?.addEventListener("abort", stop, { once: true });
  });
}

// -------------------------------------------------------------------------------------------------
// Reading the files

/** Options of {@link loadWebData}. */
export interface WebDataOptions {
  /** Topology YAML; default: see the `--topology` option. */
  readonly topology?: string;
  /** Where names are looked up from (default: the current directory). */
  readonly cwd?: string;
}

/**
 * Reads results and trace files (told apart by content: results have `"schema": "kb.results/1"`,
 * traces `"traceEvents"` or are an array of trace events) and the topology, into what `/api/data`
 * serves.
 *
 * Throws a `KbError` naming the file when one cannot be read, is not JSON, is neither kind or is
 * a results file that does not match `RunResultsSchema`; and the topology's errors.
 */
export function loadWebData(files: readonly string[], options: WebDataOptions = {}): WebData {
  const cwd = options.cwd ?? process.cwd();
  const inputs = files.map((file) => ({ file, input: readInput(file) }));
  const labels = labelsOf(files);
  const results: WebResults[] = [];
  const timelines: WebTimeline[] = [];
  inputs.forEach(({ file, input }, index) => {
    const label = labels[index] as string;
    if (input.kind === "results") results.push({ file, label, results: input.results });
    else timelines.push(timelineOfTrace(input.events, file, label));
  });

  const topologyFile = options.topology ?? defaultTopologyFile(results, cwd);
  const { topology, graph } = loadTopologyGraphFile(topologyFile);
  const nodes: WebNode[] = graph.nodes.map((node) => ({
    id: node.id,
    kind: node.kind,
    impl: node.impl,
    parent: node.parent,
    sip: node.sip,
    cube: node.cube,
    pe: node.pe,
    row: node.coords?.row ?? null,
    col: node.coords?.col ?? null,
  }));
  const edges: WebEdge[] = graph.edges.map((edge) => ({
    src: edge.src,
    dst: edge.dst,
    bw: edge.bwGbs,
    latencyNs: edge.latencyNs,
  }));

  const warnings: string[] = [];
  for (const entry of results) {
    if (entry.results.topology !== topology.name) {
      warnings.push(
        `${entry.file} is a run on topology "${entry.results.topology}", the diagram shows "${topology.name}" (${topologyFile}): its utilisation is drawn only where the ids match; pass --topology with the YAML of "${entry.results.topology}".`,
      );
    }
  }
  const ids = new Set(nodes.map((node) => node.id));
  for (const timeline of timelines) {
    const unknown = timeline.tracks
      .map((track) => track.name.replace(/#\d+$/, ""))
      .filter((name) => name !== "host" && !ids.has(name));
    if (unknown.length > 0) {
      warnings.push(
        `${timeline.file}: ${unknown.length} of its ${timeline.tracks.length} tracks are not components of topology "${topology.name}" (such as ${unknown[0]}); pass --topology with the YAML it was run on.`,
      );
    }
  }
  return {
    schema: "kb.web/1",
    topology: { file: topologyFile, name: topology.name, nodes, edges },
    results,
    timelines,
    warnings,
  };
}

type Input =
  | { readonly kind: "results"; readonly results: RunResults }
  | { readonly kind: "trace"; readonly events: readonly unknown[] };

const WHAT_KB_WEB_READS =
  'kb web reads results files (kb run --json > FILE, with "schema": "kb.results/1") and Chrome traces (kb run --trace FILE, with "traceEvents").';

function readInput(file: string): Input {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (error) {
    throw new KbError("CLI_USAGE", `cannot read the file: ${(error as Error).message}`, {
      context: { file },
      cause: error,
    });
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new KbError("CLI_USAGE", `not JSON: ${(error as Error).message}. ${WHAT_KB_WEB_READS}`, {
      context: { file },
      cause: error,
    });
  }
  if (isRecord(json) && "schema" in json) {
    if (json.schema !== "kb.results/1") {
      throw new KbError(
        "CLI_USAGE",
        `a file of schema ${JSON.stringify(json.schema)}, expected "kb.results/1". ${WHAT_KB_WEB_READS}`,
        { context: { file } },
      );
    }
    const parsed = RunResultsSchema.safeParse(json);
    if (!parsed.success) {
      const problems = parsed.error.issues
        .slice(0, 3)
        .map((issue) => `${issue.path.join(".") || "(top)"}: ${issue.message}`)
        .join("; ");
      throw new KbError(
        "CLI_USAGE",
        `not a valid results file (schema "kb.results/1"): ${problems}. Write it again with kb run --json.`,
        { context: { file } },
      );
    }
    return { kind: "results", results: parsed.data };
  }
  if (isRecord(json) && Array.isArray(json.traceEvents)) return { kind: "trace", events: json.traceEvents };
  // Chrome's other trace form: a bare array of events.
  if (Array.isArray(json) && json.every((event) => isRecord(event) && typeof event.ph === "string")) {
    return { kind: "trace", events: json };
  }
  throw new KbError("CLI_USAGE", `neither a results file nor a trace. ${WHAT_KB_WEB_READS}`, {
    context: { file },
  });
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Base names, or the paths as given where two files share a base name. */
function labelsOf(files: readonly string[]): string[] {
  const names = files.map((file) => basename(file));
  return names.map((name, index) =>
    names.indexOf(name) === names.lastIndexOf(name) ? name : (files[index] as string),
  );
}

/**
 * Turns Chrome trace events into a timeline: B/E pairs (and X complete events) become slices of
 * their (pid, tid) track, `launch` instants become markers, C events counter points. Times `ts`
 * (µs) become ns. Slices beyond `maxSlices` are counted, not kept.
 *
 * Throws a `KbError` naming the file and the event when an event is not an object with a string
 * `ph` and numeric `ts`, `pid` and `tid` (metadata events need no `ts`).
 */
export function timelineOfTrace(
  events: readonly unknown[],
  file: string,
  label = basename(file),
  maxSlices = MAX_TIMELINE_SLICES,
): WebTimeline {
  const processNames = new Map<number, string>();
  const threadNames = new Map<string, string>();
  /** Tracks by `pid:tid`, with their open slices (start ns, name index). */
  const tracks = new Map<string, { pid: number; tid: number; open: [number, number][]; used: boolean }>();
  const nameIndex = new Map<string, number>();
  const raw: { track: string; start: number; end: number; name: number }[] = [];
  const markers: { tNs: number; label: string }[] = [];
  const counters = new Map<string, { name: string; key: string; points: number[] }>();
  let counterPoints = 0;
  let totalSlices = 0;
  let endNs = 0;

  const nameOf = (name: string): number => {
    let index = nameIndex.get(name);
    if (index === undefined) {
      index = nameIndex.size;
      nameIndex.set(name, index);
    }
    return index;
  };
  const trackOf = (pid: number, tid: number) => {
    const key = `${pid}:${tid}`;
    let track = tracks.get(key);
    if (track === undefined) {
      track = { pid, tid, open: [], used: false };
      tracks.set(key, track);
    }
    return track;
  };
  const slice = (key: string, start: number, end: number, name: number) => {
    totalSlices++;
    if (raw.length < maxSlices) raw.push({ track: key, start, end, name });
  };

  events.forEach((event, index) => {
    if (!isRecord(event) || typeof event.ph !== "string") {
      throw badEvent(file, index, "is not an object with a string ph");
    }
    const pid = Number(event.pid ?? 0);
    const tid = Number(event.tid ?? 0);
    if (event.ph === "M") {
      const name = isRecord(event.args) ? event.args.name : undefined;
      if (typeof name !== "string") return;
      if (event.name === "process_name") processNames.set(pid, name);
      else if (event.name === "thread_name") threadNames.set(`${pid}:${tid}`, name);
      return;
    }
    if (typeof event.ts !== "number" || !Number.isFinite(pid) || !Number.isFinite(tid)) {
      throw badEvent(file, index, "has no numeric ts, pid and tid");
    }
    const tNs = toNs(event.ts);
    endNs = Math.max(endNs, tNs);
    const name = typeof event.name === "string" ? event.name : "";
    switch (event.ph) {
      case "B":
        trackOf(pid, tid).open.push([tNs, nameOf(name)]);
        break;
      case "E": {
        const track = trackOf(pid, tid);
        const open = track.open.pop();
        if (open === undefined) break;
        track.used = true;
        slice(`${pid}:${tid}`, open[0], tNs, open[1]);
        break;
      }
      case "X": {
        const end = tNs + toNs(typeof event.dur === "number" ? event.dur : 0);
        endNs = Math.max(endNs, end);
        const track = trackOf(pid, tid);
        track.used = true;
        slice(`${pid}:${tid}`, tNs, end, nameOf(name));
        break;
      }
      case "i":
      case "I":
        if (event.cat === "launch" || event.cat === "launch_complete") markers.push({ tNs, label: name });
        break;
      case "C": {
        const value = isRecord(event.args) ? Object.values(event.args).find((v) => typeof v === "number") : 0;
        if (typeof value !== "number" || counterPoints >= MAX_TIMELINE_COUNTER_POINTS) break;
        const key = `${pid}:${tid}`;
        const id = `${key}\u0000${name}`;
        let series = counters.get(id);
        if (series === undefined) {
          series = { name, key, points: [] };
          counters.set(id, series);
        }
        series.points.push(tNs, value);
        counterPoints++;
        break;
      }
      default:
    }
  });

  const trackName = (key: string, pid: number, tid: number) =>
    threadNames.get(key) ?? `${processNames.get(pid) ?? `pid ${pid}`} / tid ${tid}`;
  // Processes (cubes) in trace order; within one, tracks by name with numbers compared as
  // numbers, so a PE's components sit together and lanes count up (hbm#2 before hbm#10).
  const ordered = [...tracks.entries()]
    .filter(([, track]) => track.used)
    .map(([key, track]) => ({ key, track, name: trackName(key, track.pid, track.tid) }))
    .sort((a, b) => a.track.pid - b.track.pid || naturalOrder(a.name, b.name) || a.track.tid - b.track.tid);
  const trackIndex = new Map(ordered.map(({ key }, index) => [key, index]));
  const slices: number[] = [];
  raw.sort((a, b) => a.start - b.start);
  for (const entry of raw) {
    slices.push(trackIndex.get(entry.track) as number, entry.start, entry.end, entry.name);
  }
  return {
    file,
    label,
    endNs,
    tracks: ordered.map(({ track, name }) => ({
      name,
      group: processNames.get(track.pid) ?? `pid ${track.pid}`,
    })),
    names: [...nameIndex.keys()],
    slices,
    totalSlices,
    markers,
    counters: [...counters.values()].map((series) => {
      const [pid, tid] = series.key.split(":").map(Number) as [number, number];
      return { name: series.name, track: trackName(series.key, pid, tid), points: series.points };
    }),
  };
}

/** Compares names with their digit runs as numbers: `pe2` < `pe10`, `hbm#2` < `hbm#10`. */
function naturalOrder(a: string, b: string): number {
  const pattern = /(\d+)|(\D+)/g;
  const partsA = a.match(pattern) ?? [];
  const partsB = b.match(pattern) ?? [];
  for (let i = 0; i < Math.min(partsA.length, partsB.length); i++) {
    const x = partsA[i] as string;
    const y = partsB[i] as string;
    if (x === y) continue;
    const numeric = /^\d/.test(x) && /^\d/.test(y);
    if (numeric && Number(x) !== Number(y)) return Number(x) - Number(y);
    return x < y ? -1 : 1;
  }
  return partsA.length - partsB.length;
}

/** Trace µs as ns, without float noise (ps resolution). */
function toNs(us: number): number {
  return Math.round(us * 1e6) / 1e3;
}

function badEvent(file: string, index: number, problem: string): KbError {
  return new KbError(
    "CLI_USAGE",
    `traceEvents[${index}] ${problem}: not a Chrome trace kb web can read. ${WHAT_KB_WEB_READS}`,
    { context: { file } },
  );
}

// -------------------------------------------------------------------------------------------------
// Finding files beside kb

/** The directory of this file: `src/` when run from sources, `dist/` when built. */
const CLI_DIR = dirname(fileURLToPath(import.meta.url));

/**
 * Where the built page is: `dist/web` beside a built kb (the CLI's build copies it there), else
 * `apps/web/dist` of the repository kb runs from. Throws a `KbError` saying how to build it.
 */
export function findPageDir(): string {
  const candidates = [join(CLI_DIR, "web"), resolve(CLI_DIR, "..", "..", "web", "dist")];
  const found = candidates.find((dir) => existsSync(join(dir, "index.html")));
  if (found !== undefined) return found;
  throw new KbError(
    "CLI_USAGE",
    `the page of kb web is not built (looked for index.html in ${candidates.join(" and ")}). In a clone of the repository run: npx -y pnpm@10 build`,
  );
}

/** `topologies/NAME.yaml` of the first results' topology NAME when it exists, else `topologies/default.yaml`. */
function defaultTopologyFile(results: readonly WebResults[], cwd: string): string {
  const name = results[0]?.results.topology;
  if (name !== undefined && /^[\w.-]+$/.test(name)) {
    const named = findUp(join("topologies", `${name}.yaml`), cwd);
    if (named !== undefined) return named;
  }
  return findUp(join("topologies", "default.yaml"), cwd) ?? "topologies/default.yaml";
}

/** The first `<dir>/<relative>` that is a file, over `cwd` and its parents, then kb's directory and its parents (as kb run looks up topologies). */
function findUp(relative: string, cwd: string): string | undefined {
  const dirs: string[] = [];
  for (const start of [resolve(cwd), CLI_DIR]) {
    for (let dir = start; ; dir = dirname(dir)) {
      if (!dirs.includes(dir)) dirs.push(dir);
      if (dirname(dir) === dir) break;
    }
  }
  for (const dir of dirs) {
    const candidate = join(dir, relative);
    try {
      if (statSync(candidate).isFile()) return candidate;
    } catch {
      // not there: look further up
    }
  }
  return undefined;
}

// -------------------------------------------------------------------------------------------------
// The server

/** Options of {@link startWebServer}. */
export interface WebServerOptions {
  /** What `/api/data` answers. */
  readonly data: WebData;
  /** The directory of the built page (`index.html` and its assets). */
  readonly pageDir: string;
  /** Address to bind (default `127.0.0.1`). */
  readonly host?: string;
  /** Port (default {@link DEFAULT_WEB_PORT}; 0 picks a free one). */
  readonly port?: number;
}

/** A running `kb web` server. */
export interface WebServer {
  /** The page's address, such as `http://127.0.0.1:8080/`. */
  readonly url: string;
  /** The address bound. */
  readonly host: string;
  /** The port bound (the one picked when 0 was asked for). */
  readonly port: number;
  /** Stops listening, ends open connections and resolves when the server is closed. */
  close(): Promise<void>;
}

const CONTENT_TYPES: Readonly<Record<string, string>> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".map": "application/json; charset=utf-8",
  ".json": "application/json; charset=utf-8",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".ico": "image/x-icon",
};

/** The page may load only what this server serves. */
const SECURITY_HEADERS = {
  "X-Content-Type-Options": "nosniff",
  "Content-Security-Policy":
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data: blob:; connect-src 'self'",
  "Referrer-Policy": "no-referrer",
};

/**
 * Serves the page from `pageDir` and the data at `GET /api/data` on `host:port` (node:http).
 * Only GET and HEAD are answered (405 otherwise); a path outside `pageDir` is a 404 like any
 * missing file. Bound to a loopback address, it answers only requests whose Host is a loopback
 * name (403 otherwise), so another web site cannot read the results through DNS rebinding.
 *
 * Throws a `KbError` when the port is taken or the address cannot be bound.
 */
export async function startWebServer(options: WebServerOptions): Promise<WebServer> {
  const host = options.host ?? "127.0.0.1";
  const requestedPort = options.port ?? DEFAULT_WEB_PORT;
  const pageDir = resolve(options.pageDir);
  const body = Buffer.from(JSON.stringify(options.data), "utf8");
  const loopbackOnly = isLoopback(host);

  const server = createServer((request, response) => {
    handle(request, response, { pageDir, body, loopbackOnly }).catch((error: unknown) => {
      send(response, 500, `internal error: ${(error as Error).message}\n`);
    });
  });
  await new Promise<void>((resolvePromise, reject) => {
    server.once("error", (error: NodeJS.ErrnoException) => {
      const fix =
        error.code === "EADDRINUSE"
          ? `port ${requestedPort} is in use: pass --port N, or --port 0 for any free port`
          : `cannot listen on ${host}:${requestedPort} (${error.code ?? error.message}): pass another --host or --port`;
      reject(new KbError("CLI_USAGE", `kb web: ${fix}.`, { cause: error }));
    });
    server.listen(requestedPort, host, () => resolvePromise());
  });
  const address = server.address();
  const port = typeof address === "object" && address !== null ? address.port : requestedPort;
  const shownHost = host === "0.0.0.0" || host === "::" ? "127.0.0.1" : host;
  const url = `http://${isIP(shownHost) === 6 ? `[${shownHost}]` : shownHost}:${port}/`;
  let closing: Promise<void> | null = null;
  return {
    url,
    host,
    port,
    close() {
      closing ??= new Promise<void>((resolvePromise) => {
        server.close(() => resolvePromise());
        server.closeAllConnections();
      });
      return closing;
    },
  };
}

interface HandlerState {
  readonly pageDir: string;
  readonly body: Buffer;
  readonly loopbackOnly: boolean;
}

async function handle(
  request: IncomingMessage,
  response: ServerResponse,
  state: HandlerState,
): Promise<void> {
  if (request.method !== "GET" && request.method !== "HEAD") {
    send(response, 405, "only GET and HEAD\n", { Allow: "GET, HEAD" });
    return;
  }
  if (state.loopbackOnly && !isLoopbackHostHeader(request.headers.host)) {
    send(response, 403, "kb web answers only requests to localhost\n");
    return;
  }
  let pathname: string;
  try {
    pathname = decodeURIComponent(new URL(request.url ?? "/", "http://localhost").pathname);
  } catch {
    send(response, 400, "bad request path\n");
    return;
  }
  if (pathname === "/api/data") {
    send(response, 200, state.body, { "Content-Type": "application/json; charset=utf-8" }, request);
    return;
  }
  const file = pageFile(state.pageDir, pathname === "/" ? "/index.html" : pathname);
  let content: Buffer | null = null;
  if (file !== null) {
    try {
      content = await readFile(file);
    } catch {
      content = null;
    }
  }
  if (file === null || content === null) {
    send(response, 404, `not found: ${pathname}\n`);
    return;
  }
  const type = CONTENT_TYPES[extname(file)] ?? "application/octet-stream";
  send(response, 200, content, { "Content-Type": type }, request);
}

/** The file of `pathname` under `root`, or null when it would leave `root` (`..`, `\`, NUL). */
function pageFile(root: string, pathname: string): string | null {
  if (pathname.includes("\0") || pathname.includes("\\")) return null;
  const file = resolve(root, `.${pathname}`);
  return file.startsWith(`${root}${sep}`) ? file : null;
}

function send(
  response: ServerResponse,
  status: number,
  body: string | Buffer,
  headers: Record<string, string> = {},
  request?: IncomingMessage,
): void {
  const bytes = typeof body === "string" ? Buffer.from(body, "utf8") : body;
  response.writeHead(status, {
    "Content-Type": "text/plain; charset=utf-8",
    "Content-Length": String(bytes.length),
    "Cache-Control": "no-store",
    ...SECURITY_HEADERS,
    ...headers,
  });
  response.end(request?.method === "HEAD" ? undefined : bytes);
}

function isLoopback(host: string): boolean {
  return host === "localhost" || host === "::1" || /^127\.\d+\.\d+\.\d+$/.test(host);
}

/** Whether a Host header names this machine's loopback (`localhost`, `127.x.x.x`, `[::1]`, with a port). */
function isLoopbackHostHeader(header: string | undefined): boolean {
  if (header === undefined) return false;
  const name = header.startsWith("[") ? header.slice(1, header.indexOf("]")) : header.replace(/:\d+$/, "");
  return isLoopback(name.toLowerCase());
}
