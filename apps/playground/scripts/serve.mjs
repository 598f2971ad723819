#!/usr/bin/env node
// Serves the built playground (dist/) on a local port: what `pnpm playground` runs, and what the
// end-to-end test starts on a free port. Plain files only, as any static host serves them: no
// COOP/COEP headers, no server-side logic.
//
//   node apps/playground/scripts/serve.mjs [--port 5173] [--host 127.0.0.1] [--dir apps/playground/dist]
//   node apps/playground/scripts/serve.mjs --help

import { existsSync } from "node:fs";
import { readFile, stat } from "node:fs/promises";
import { createServer } from "node:http";
import { extname, join, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";

const CONTENT_TYPES = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".mjs": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".json": "application/json; charset=utf-8",
  ".wasm": "application/wasm",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".ico": "image/x-icon",
};

/** The playground's dist/ folder. */
export const DIST_DIR = fileURLToPath(new URL("../dist/", import.meta.url));

/**
 * Serves `dir` on `host:port` (0: a free port); resolves with the page's URL and a close function.
 * A path outside `dir` or missing is a 404; a folder serves its index.html.
 */
export async function serveStatic({ dir = DIST_DIR, host = "127.0.0.1", port = 0 } = {}) {
  const root = resolve(dir);
  if (!existsSync(join(root, "index.html"))) {
    throw new Error(
      `${root} has no index.html: build the playground first (npx -y pnpm@10 build:playground)`,
    );
  }
  const server = createServer(async (request, response) => {
    try {
      const path = decodeURIComponent(new URL(request.url ?? "/", "http://localhost").pathname);
      let file = resolve(root, `.${path}`);
      if (file !== root && !file.startsWith(root + sep)) throw new Error("outside");
      if ((await stat(file)).isDirectory()) file = join(file, "index.html");
      const body = await readFile(file);
      response.writeHead(200, {
        "Content-Type": CONTENT_TYPES[extname(file)] ?? "application/octet-stream",
        "Content-Length": body.length,
        "Cache-Control": "no-cache",
      });
      response.end(request.method === "HEAD" ? undefined : body);
    } catch {
      response.writeHead(404, { "Content-Type": "text/plain; charset=utf-8" });
      response.end("not found\n");
    }
  });
  await new Promise((resolvePromise, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => resolvePromise(undefined));
  });
  const address = server.address();
  const bound = typeof address === "object" && address !== null ? address.port : port;
  return {
    url: `http://${host}:${bound}/`,
    close: () =>
      new Promise((resolvePromise) => {
        server.closeAllConnections();
        server.close(() => resolvePromise(undefined));
      }),
  };
}

const USAGE = `Serves the built kb playground (apps/playground/dist) on localhost.

  npx -y pnpm@10 playground [--port 5173] [--host 127.0.0.1] [--dir <folder>]
  node apps/playground/scripts/serve.mjs [--port 5173] [--host 127.0.0.1] [--dir <folder>]

  --port <n>     the port (default 5173; when it is taken, the next free one up to 5183).
                 0 picks any free port.
  --host <name>  the address to listen on (default 127.0.0.1; 0.0.0.0 serves other machines too).
  --dir <folder> the folder to serve (default apps/playground/dist).
  --help         this text.
`;

/** Exits with `message` and the usage (exit code 2, as kb's usage errors). */
function usageError(message) {
  process.stderr.write(`serve: ${message}\n\n${USAGE}`);
  process.exit(2);
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2);
  if (args.includes("--help") || args.includes("-h")) {
    process.stdout.write(USAGE);
    process.exit(0);
  }
  const options = {};
  for (let at = 0; at < args.length; at += 2) {
    const name = args[at];
    const value = args[at + 1];
    if (!["--port", "--host", "--dir"].includes(name)) usageError(`unknown option ${name}`);
    if (value === undefined || value.startsWith("--")) usageError(`${name} needs a value`);
    options[name.slice(2)] = value;
  }
  const port = Number(options.port ?? "5173");
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    usageError(`--port ${options.port}: a port is a whole number from 0 to 65535`);
  }
  const dir = options.dir ?? DIST_DIR;
  // The default port may be taken (a Vite dev server, a second playground): try the next ones,
  // as Vite does. A port given with --port is that port or an error.
  const tries = options.port === undefined ? 11 : 1;
  let served;
  for (let attempt = 0; served === undefined; attempt++) {
    try {
      served = await serveStatic({ dir, host: options.host ?? "127.0.0.1", port: port + attempt });
    } catch (error) {
      if (error?.code === "EADDRINUSE" && attempt + 1 < tries) continue;
      const why =
        error?.code === "EADDRINUSE"
          ? `port ${port + attempt} is in use; give another with --port (0: any free port)`
          : error instanceof Error
            ? error.message
            : String(error);
      process.stderr.write(`serve: ${why}\n`);
      process.exit(1);
    }
  }
  process.stdout.write(`kb playground at ${served.url} (Ctrl+C stops it)\n`);
  const stop = () => void served.close().then(() => process.exit(0));
  process.on("SIGINT", stop);
  process.on("SIGTERM", stop);
}
