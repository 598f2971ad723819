import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { isIP } from "node:net";
import { dirname, extname, join, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { KbError } from "@kb/errors";
import type { WebData } from "../api.js";
import { FilteredSlices } from "../slice-filter.js";
import type { SliceIndex } from "../slice-index.js";
import type { SweepData } from "../sweep-api.js";
import { filterOfQuery } from "../timeline-filter-model.js";
import { sweepCsv } from "./web-sweep.js";

// The HTTP server of `kb web`: the built page and /api/data, on a loopback address; for a sweep,
// its page (sweep.html at /), /api/sweep, and each cached run at /api/data?run=DIGEST.

/** The default port of `kb web`. */
export const DEFAULT_WEB_PORT = 8080;

/**
 * The directory of this module: `apps/web/src/server/` when run from sources, the CLI's `dist/`
 * once bundled into kb (the server ships inside @kb/cli).
 */
const HERE = dirname(fileURLToPath(import.meta.url));

/**
 * Where the built page is: `dist/web` beside a built kb (the CLI's build copies it there), else
 * `apps/web/dist` of the repository kb runs from. Throws a `KbError` saying how to build it.
 */
export function findPageDir(): string {
  const candidates = [join(HERE, "web"), resolve(HERE, "..", "..", "dist")];
  const found = candidates.find((dir) => existsSync(join(dir, "index.html")));
  if (found !== undefined) return found;
  throw new KbError(
    "CLI_USAGE",
    `the page of kb web is not built (looked for index.html in ${candidates.join(" and ")}). In a clone of the repository run: npx -y pnpm@10 build`,
  );
}

/** Options of {@link startWebServer}. */
export interface WebServerOptions {
  /** What `/api/data` answers (none: a sweep's server, whose `/api/data` needs `?run=`). */
  readonly data?: WebData;
  /** A sweep to serve: its page at `/`, `/api/sweep`, and `/api/data?run=DIGEST`. */
  readonly sweep?: WebSweep;
  /** The slices of `data.timelines[i]` at `i`, for `/api/timeline` (none: it answers 404). */
  readonly slices?: readonly SliceIndex[];
  /** The directory of the built page (`index.html` and its assets). */
  readonly pageDir: string;
  /** Address to bind (default `127.0.0.1`). */
  readonly host?: string;
  /** Port (default {@link DEFAULT_WEB_PORT}; 0 picks a free one). */
  readonly port?: number;
  /**
   * Host names and addresses requests may be for, besides loopback names and `host` itself
   * (`--allow-host`). Required when `host` is a wildcard address (0.0.0.0, ::).
   */
  readonly allowHosts?: readonly string[];
}

/** What a sweep's server answers (see web-sweep.ts). */
export interface WebSweep {
  /** What `/api/sweep` answers. */
  readonly data: SweepData;
  /** What `/api/data?run=DIGEST` answers: a point's cached run, or null (404). */
  run(digest: string): Promise<WebData | null>;
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
 * missing file. It answers only requests whose Host header names this server: a loopback name,
 * the address bound, or one of `allowHosts` (403 otherwise), so another web site cannot read the
 * results through DNS rebinding.
 *
 * Throws a `KbError` when the port is taken, the address cannot be bound, or it is a wildcard
 * address (every address of the machine: no name to check a Host against) and `allowHosts` is
 * empty.
 */
export async function startWebServer(options: WebServerOptions): Promise<WebServer> {
  const host = options.host ?? "127.0.0.1";
  const requestedPort = options.port ?? DEFAULT_WEB_PORT;
  const pageDir = resolve(options.pageDir);
  const body = options.data === undefined ? null : Buffer.from(JSON.stringify(options.data), "utf8");
  const sweepBody =
    options.sweep === undefined ? null : Buffer.from(JSON.stringify(options.sweep.data), "utf8");
  const hostNames = new Set((options.allowHosts ?? []).map(hostName));
  const slices = (options.slices ?? []).map((index) => new FilteredSlices(index));
  const traceFiles = (options.data?.timelines ?? []).map((timeline) => timeline.file);

  const server = createServer((request, response) => {
    const sweep =
      options.sweep === undefined || sweepBody === null ? null : { source: options.sweep, body: sweepBody };
    handle(request, response, { pageDir, body, sweep, hostNames, slices, traceFiles }).catch(
      (error: unknown) => {
        send(response, 500, `internal error: ${(error as Error).message}\n`);
      },
    );
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
  const bound = typeof address === "object" && address !== null ? address.address : host;
  if (isWildcard(bound)) {
    if (hostNames.size === 0) {
      await new Promise<void>((resolvePromise) => server.close(() => resolvePromise()));
      throw wildcardWithoutAllowHost(host);
    }
  } else {
    hostNames.add(hostName(host));
    hostNames.add(hostName(bound));
  }
  const shownHost = isWildcard(bound) ? "127.0.0.1" : host;
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
  readonly body: Buffer | null;
  readonly sweep: { readonly source: WebSweep; readonly body: Buffer } | null;
  /** Names a request's Host may have besides loopback names (lower case, no port or brackets). */
  readonly hostNames: ReadonlySet<string>;
  readonly slices: readonly FilteredSlices[];
  /** The trace files of the timelines, at their index (`/api/trace`). */
  readonly traceFiles: readonly string[];
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
  if (!isAllowedHost(request.headers.host, state.hostNames)) {
    send(
      response,
      403,
      "kb web answers only requests for localhost and the names it was started with (kb web --allow-host NAME)\n",
    );
    return;
  }
  let pathname: string;
  let query: URLSearchParams;
  try {
    const url = new URL(request.url ?? "/", "http://localhost");
    pathname = decodeURIComponent(url.pathname);
    query = url.searchParams;
  } catch {
    send(response, 400, "bad request path\n");
    return;
  }
  if (pathname === "/api/data" && query.has("run")) {
    await answerRun(query.get("run") ?? "", state.sweep?.source ?? null, request, response);
    return;
  }
  if (pathname === "/api/data" && state.body !== null) {
    send(response, 200, state.body, { "Content-Type": "application/json; charset=utf-8" }, request);
    return;
  }
  if (pathname === "/api/data") {
    send(
      response,
      404,
      "kb web serves a sweep: /api/data?run=DIGEST answers the run of a point (open it from the sweep page)\n",
    );
    return;
  }
  if (pathname === "/api/sweep") {
    if (state.sweep === null) send(response, 404, "kb web serves no sweep: run kb web RESULTS.jsonl\n");
    else
      send(response, 200, state.sweep.body, { "Content-Type": "application/json; charset=utf-8" }, request);
    return;
  }
  if (pathname === "/api/sweep.csv") {
    if (state.sweep === null) send(response, 404, "kb web serves no sweep: run kb web RESULTS.jsonl\n");
    else
      send(
        response,
        200,
        sweepCsv(state.sweep.source.data),
        {
          "Content-Type": "text/csv; charset=utf-8",
          "Content-Disposition": 'attachment; filename="results.csv"',
        },
        request,
      );
    return;
  }
  if (pathname === "/api/timeline") {
    answerTimeline(query, state.slices, request, response);
    return;
  }
  if (pathname === "/api/trace") {
    await answerTrace(query, state.traceFiles, request, response);
    return;
  }
  // A sweep's page at /, a point's run page at /?run=DIGEST.
  const home = state.sweep !== null && !query.has("run") ? "/sweep.html" : "/index.html";
  const file = pageFile(state.pageDir, pathname === "/" ? home : pathname);
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

/**
 * `GET /api/timeline?trace=I&from=NS&to=NS&width=N[&site=FILE:LINE][&q=TEXT]`: the window of
 * timeline I (see `WebTimelineWindow`), of the slices the filter keeps when one is given; 400
 * naming the bad parameter, 404 for a trace that is not there.
 */
function answerTimeline(
  query: URLSearchParams,
  slices: readonly FilteredSlices[],
  request: IncomingMessage,
  response: ServerResponse,
): void {
  const numbers = new Map<string, number>();
  for (const name of ["trace", "from", "to", "width"]) {
    const value = Number(query.get(name) ?? Number.NaN);
    if (!Number.isFinite(value)) {
      send(response, 400, `/api/timeline needs a number for ${name} (trace, from, to, width)\n`);
      return;
    }
    numbers.set(name, value);
  }
  const index = slices[numbers.get("trace") as number];
  if (index === undefined) {
    send(response, 404, `no trace ${numbers.get("trace")}: ${slices.length} given\n`);
    return;
  }
  const window = index.window(
    numbers.get("from") as number,
    numbers.get("to") as number,
    numbers.get("width") as number,
    filterOfQuery(query),
  );
  send(response, 200, JSON.stringify(window), { "Content-Type": "application/json; charset=utf-8" }, request);
}

/**
 * `GET /api/trace?trace=I`: trace file I as kb web was given it, byte for byte (what "Open in
 * Perfetto" hands to ui.perfetto.dev); 400 without a number, 404 for a trace that is not there.
 */
async function answerTrace(
  query: URLSearchParams,
  files: readonly string[],
  request: IncomingMessage,
  response: ServerResponse,
): Promise<void> {
  const index = Number(query.get("trace") ?? Number.NaN);
  if (!Number.isInteger(index)) {
    send(response, 400, "/api/trace needs the number of a trace: /api/trace?trace=0\n");
    return;
  }
  const file = files[index];
  if (file === undefined) {
    send(response, 404, `no trace ${index}: ${files.length} given\n`);
    return;
  }
  let content: Buffer;
  try {
    content = await readFile(file);
  } catch (error) {
    send(response, 404, `cannot read trace ${file}: ${(error as Error).message}\n`);
    return;
  }
  send(response, 200, content, { "Content-Type": "application/octet-stream" }, request);
}

/**
 * `GET /api/data?run=DIGEST`: the `WebData` of a sweep's point whose results are cached; 400 for
 * what is not a digest, 404 for a run that is not a point's or not in the cache.
 */
async function answerRun(
  digest: string,
  sweep: WebSweep | null,
  request: IncomingMessage,
  response: ServerResponse,
): Promise<void> {
  if (!/^[0-9a-f]{64}$/.test(digest)) {
    send(response, 400, `/api/data?run= needs a manifest digest (64 hex digits), got "${digest}"\n`);
    return;
  }
  if (sweep === null) {
    send(
      response,
      404,
      "kb web serves no sweep: ?run=DIGEST opens a point of kb web RESULTS.jsonl --cache DIR\n",
    );
    return;
  }
  let data: WebData | null;
  try {
    data = await sweep.run(digest);
  } catch (error) {
    send(response, 500, `cannot read run ${digest}: ${(error as Error).message}\n`);
    return;
  }
  if (data === null) {
    const where =
      sweep.data.cacheDir === null
        ? "no results cache was given: run kb web with --cache DIR (the folder given to kb sweep --cache)"
        : `${sweep.data.cacheDir} has no ${digest}.json, or no point of the sweep has that digest`;
    send(response, 404, `no run ${digest}: ${where}\n`);
    return;
  }
  send(response, 200, JSON.stringify(data), { "Content-Type": "application/json; charset=utf-8" }, request);
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

/** True for a loopback host name or address (`localhost`, `127.0.0.1`, `::1`). */
export function isLoopback(host: string): boolean {
  return host === "localhost" || host === "::1" || /^127\.\d+\.\d+\.\d+$/.test(host);
}

/**
 * The error of a wildcard `--host` without `--allow-host`: every address of the machine is no
 * name to check a request's Host against.
 */
export function wildcardWithoutAllowHost(host: string): KbError {
  return new KbError(
    "CLI_USAGE",
    `kb web: --host ${host === "" ? '""' : host} listens on every address of this machine, so the Host of a request is no proof it was meant for kb web (a web page can send requests here through DNS rebinding). Pass --allow-host NAME with each name or address the page is opened at (such as --allow-host myhost.example,192.168.1.20; localhost is always allowed), or --host with one address of this machine.`,
  );
}

/** True for an address that means every address of the machine (`0.0.0.0`, `::`, or none). */
export function isWildcard(address: string): boolean {
  return address === "" || address === "0.0.0.0" || (isIP(address) === 6 && /^[0:]+$/.test(address));
}

/** A host name or address as Host headers are compared: lower case, without a port, brackets or a trailing dot. */
export function hostName(host: string): string {
  const name = host.startsWith("[")
    ? host.slice(1, host.indexOf("]"))
    : isIP(host) === 6
      ? host
      : host.replace(/:\d*$/, "");
  return name.toLowerCase().replace(/\.$/, "");
}

/** Whether a Host header names a loopback name or one of `names` (with or without a port). */
function isAllowedHost(header: string | undefined, names: ReadonlySet<string>): boolean {
  if (header === undefined) return false;
  const name = hostName(header);
  return isLoopback(name) || names.has(name);
}
