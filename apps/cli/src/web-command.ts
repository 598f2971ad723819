import { isIP } from "node:net";
import { KbError } from "@kb/errors";
import type { WebData } from "@kb/web-ui/api";
import {
  DEFAULT_MAX_INPUT_BYTES,
  DEFAULT_WEB_PORT,
  findPageDir,
  hostName,
  isLoopback,
  isWildcard,
  loadSweepSource,
  loadWebData,
  MAX_INPUT_OPTION,
  type SweepSource,
  startWebServer,
  sweepTableIn,
  type WebServer,
  wildcardWithoutAllowHost,
} from "@kb/web-ui/server";
import { type Command, InvalidArgumentError, Option } from "commander";
import { topologyLookup } from "./bench-files.js";
import { groupDigits } from "./format-run.js";
import type { CliIo } from "./run-cli.js";

// `kb web`: the command's arguments, what it prints and its exit code. Reading results, traces
// and sweep tables and serving them with the page is the server's job (apps/web/src/server,
// `@kb/web-ui/server`, bundled into kb at build time); what crosses the wire is declared once, by
// the page (apps/web/src/api.ts). A sweep's results.jsonl (kb sweep) gets the sweep page instead.

/** Options of `kb web` as commander parses them. */
interface WebOptions {
  topology?: string;
  cache?: string;
  port: number;
  host: string;
  allowHost: string[];
  maxInputSize: number;
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
        "Given a sweep's results.jsonl (kb sweep), alone, it serves the sweep page instead: a table " +
        "of the points, a scatter of two metrics with the Pareto front, parallel coordinates; a " +
        "point whose results are in --cache DIR opens as its run's page. Runs until Ctrl-C.",
    )
    .argument(
      "[files...]",
      "results JSON files and Chrome trace JSON files, in any order; or one sweep's results.jsonl",
    )
    .option(
      "--topology <file>",
      "topology YAML the diagram draws (default: topologies/NAME.yaml for the topology NAME of the first results file when there is one, else topologies/default.yaml; looked up like kb run's)",
    )
    .option(
      "--cache <dir>",
      "with a sweep's results.jsonl: the results cache given to kb sweep --cache, from which the points' runs open (default: none, runs do not open)",
    )
    .option("--port <n>", "port to listen on (0: any free port)", parsePort, DEFAULT_WEB_PORT)
    .option(
      "--host <address>",
      "address to bind; anything but a loopback address shows your results to the network, and a wildcard address (0.0.0.0, ::) needs --allow-host",
      "127.0.0.1",
    )
    .addOption(
      new Option(
        "--allow-host <names>",
        "a host name or address the page is opened at, besides localhost and --host's address: requests for any other Host are refused (403), so no web site can read your results through DNS rebinding; required with --host 0.0.0.0 or ::; repeat it or give a comma list",
      )
        .argParser(collectHosts)
        .default([], "none"),
    )
    .addOption(
      new Option(
        `${MAX_INPUT_OPTION} <size>`,
        "the most kb web reads of one file, on disk and once decompressed (a gzip can inflate a thousand times), such as 512MiB or 16GiB; a larger file is refused saying so",
      )
        .argParser(parseByteSize)
        .default(DEFAULT_MAX_INPUT_BYTES, "4GiB"),
    )
    .addHelpText(
      "after",
      "\nExamples:\n" +
        "  kb run gemm --json --trace gemm.trace.json > gemm.json\n" +
        "  kb web gemm.json gemm.trace.json            # then open http://127.0.0.1:8080/\n" +
        "  kb web small.json big.json --port 0         # compare two design points on a free port\n" +
        "  kb web ref.json --topology topologies/ref-cube.yaml\n" +
        "  kb web sweeps/results/gemm-hbm/results.jsonl --cache /tmp/kbcache   # a sweep's page\n" +
        "  kb web gemm.json --host 0.0.0.0 --allow-host myhost.example   # open it at http://myhost.example:8080/",
    )
    .action(async (files: string[], options: WebOptions) => {
      const cwd = process.cwd();
      const topology = {
        topologies: topologyLookup,
        ...(options.topology !== undefined ? { topology: options.topology } : {}),
      };
      const maxInputBytes = options.maxInputSize;
      const listen = {
        host: options.host,
        port: options.port,
        allowHosts: options.allowHost,
      };
      // Said before the files are read, which can take a while.
      if (isWildcard(options.host) && options.allowHost.length === 0) {
        throw wildcardWithoutAllowHost(options.host);
      }
      const sweepFile = await sweepTableIn(files);
      if (sweepFile === null && options.cache !== undefined) {
        throw new KbError(
          "CLI_USAGE",
          "--cache opens the runs of a sweep's points: give kb web a sweep's results.jsonl (kb sweep writes it) with it.",
        );
      }
      const pageDir = hooks.pageDir ?? findPageDir();
      let served: { warnings: readonly string[]; description: string };
      let server: WebServer;
      if (sweepFile === null) {
        const { data, slices } = await loadWebData(files, { ...topology, cwd, maxInputBytes });
        server = await startWebServer({ ...listen, data, slices, pageDir });
        served = { warnings: data.warnings, description: describeData(data) };
      } else {
        const sweep = await loadSweepSource(sweepFile, {
          ...topology,
          ...(options.cache !== undefined ? { cacheDir: options.cache } : {}),
          cwd,
          maxInputBytes,
        });
        server = await startWebServer({ ...listen, sweep, pageDir });
        served = { warnings: sweep.data.warnings, description: describeSweep(sweep) };
      }
      const warnings = isLoopback(options.host)
        ? served.warnings
        : [
            ...served.warnings,
            `listening on ${options.host === "" ? "every address" : options.host}, not a loopback address: anyone who can reach this machine can read the page and its results.`,
          ];
      for (const warning of warnings) io.stderr.write(`kb web: warning: ${warning}\n`);
      io.stdout.write(`${served.description}kb web: serving on ${server.url} (Ctrl-C to stop)\n`);
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

/** A DNS name: labels of letters, digits and inner hyphens, separated by dots. */
const HOST_NAME = /^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$/;

/** `--allow-host`: names and addresses added to the ones before, from a comma list. */
function collectHosts(value: string, previous: string[]): string[] {
  const names = value.split(",").map((name) => name.trim());
  for (const name of names) {
    const bare = hostName(name);
    const plainName = bare === name.toLowerCase().replace(/\.$/, "") && HOST_NAME.test(bare);
    if (isIP(bare) === 0 && !plainName) {
      throw new InvalidArgumentError(
        `expected host names or addresses without a port, such as myhost.example or 192.168.1.20, separated by commas; got "${name}".`,
      );
    }
  }
  return [...previous, ...names];
}

/** A size in bytes: a whole number of bytes, or a number with KiB, MiB, GiB, TiB (or kB, MB, GB, TB). */
function parseByteSize(value: string): number {
  const match = /^(\d+(?:\.\d+)?)\s*(B|KiB|MiB|GiB|TiB|kB|KB|MB|GB|TB)?$/i.exec(value.trim());
  const units: Readonly<Record<string, number>> = {
    b: 1,
    kib: 1024,
    mib: 1024 ** 2,
    gib: 1024 ** 3,
    tib: 1024 ** 4,
    kb: 1e3,
    mb: 1e6,
    gb: 1e9,
    tb: 1e12,
  };
  const bytes =
    match === null
      ? Number.NaN
      : Math.floor(Number(match[1]) * (units[(match[2] ?? "b").toLowerCase()] ?? 1));
  if (!Number.isSafeInteger(bytes) || bytes < 1) {
    throw new InvalidArgumentError(
      `expected a size such as 512MiB, 16GiB or 1000000 (bytes); got "${value}".`,
    );
  }
  return bytes;
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
    lines.push(
      `kb web: trace ${timeline.file}: ${groupDigits(timeline.tracks.length)} tracks, ${groupDigits(timeline.totalSlices)} slices`,
    );
  }
  return `${lines.join("\n")}\n`;
}

/** What the server read of a sweep, for the terminal. */
function describeSweep({ data }: SweepSource): string {
  const ok = data.rows.filter((row) => row.status === "ok").length;
  const cached = data.rows.filter((row) => row.cached).length;
  const runs =
    data.cacheDir === null
      ? "no --cache: the points' runs do not open"
      : `${cached} with results in ${data.cacheDir} (their runs open from the page)`;
  return (
    `kb web: sweep ${data.file}: ${data.rows.length} points (${ok} ok, ${data.rows.length - ok} failed), ` +
    `${data.axes.length} axes, ${data.metrics.length} metrics; ${runs}\n`
  );
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
