// The queue tests' Redis: Debian's redis-server, started on 127.0.0.1 on a free port with its files
// in a temp folder and nothing saved. CI (.ci/run) installs it; elsewhere the tests skip with a
// message when it is missing (set KB_REDIS_SERVER to use another binary).
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { createConnection } from "node:net";
import { join } from "node:path";
import { freePort } from "./free-port.js";

/** The redis-server binary the tests start. */
export const REDIS_SERVER: string = process.env.KB_REDIS_SERVER ?? "/usr/bin/redis-server";
/** How to get it on Debian. */
export const INSTALL_REDIS = "apt-get update && apt-get install -y redis-server";
/** True when the binary is there. */
export const haveRedis = existsSync(REDIS_SERVER);
const inCi = (process.env.CI ?? "") !== "" && process.env.CI !== "false";
/** Run the Redis tests: redis-server is there, or CI (where its absence fails them). */
export const runRedisTests = haveRedis || inCi;
/** Why the Redis tests are skipped here, for a console line (empty when they run). */
export const redisSkipReason = runRedisTests
  ? ""
  : `no redis-server at ${REDIS_SERVER}. Install Debian's with: ${INSTALL_REDIS} (CI installs it and runs the tests).`;

/** A redis-server started by {@link startRedis}. */
export interface RunningRedis {
  readonly port: number;
  /** `redis://[:password@]127.0.0.1:PORT` */
  readonly url: string;
  /** Its output so far, for failure messages. */
  log(): string;
  /** Stops it (SIGTERM, SIGKILL after 5 s); resolves when it has exited. Safe to call twice. */
  stop(): Promise<void>;
}

/** Options of {@link startRedis}. */
export interface StartRedisOptions {
  /** Its working folder (config file, nothing else: no RDB, no AOF). */
  readonly dir: string;
  /** `requirepass`, written to the config file (not the command line, so not in `ps`). */
  readonly password?: string;
  /** The port (a free one by default): a server started again where another one was, as after a restart. */
  readonly port?: number;
}

/**
 * Starts redis-server on 127.0.0.1 on a free port, `dir` its folder, with persistence off, and
 * resolves once it answers PING (within 10 s, or throws with its output). Throws, naming how to
 * install it, when the binary is missing.
 */
export async function startRedis(options: StartRedisOptions): Promise<RunningRedis> {
  if (!existsSync(REDIS_SERVER)) {
    throw new Error(`no redis-server at ${REDIS_SERVER}: install Debian's with: ${INSTALL_REDIS}`);
  }
  mkdirSync(options.dir, { recursive: true });
  const port = options.port ?? (await freePort());
  const config = join(options.dir, "redis.conf");
  writeFileSync(
    config,
    [
      `port ${port}`,
      "bind 127.0.0.1",
      `dir "${options.dir}"`,
      'save ""',
      "appendonly no",
      "daemonize no",
      "protected-mode yes",
      ...(options.password !== undefined ? [`requirepass "${options.password}"`] : []),
      "",
    ].join("\n"),
  );
  const child: ChildProcess = spawn(REDIS_SERVER, [config], { stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  child.stdout?.on("data", (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on("data", (chunk: Buffer) => (output += chunk.toString()));
  let spawnError: Error | null = null;
  child.on("error", (error) => (spawnError = error));
  const exited = new Promise<void>((done) => child.once("close", () => done()));
  const running = () => child.exitCode === null && child.signalCode === null && spawnError === null;
  const stop = async () => {
    if (running()) {
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), 5000);
      await exited;
      clearTimeout(timer);
    }
  };
  const deadline = performance.now() + 10_000;
  while (!(await answersPing(port))) {
    if (!running() || performance.now() > deadline) {
      await stop();
      throw new Error(
        `redis-server did not answer PING on 127.0.0.1:${port}${spawnError === null ? "" : ` (${String(spawnError)})`}:\n${output}`,
      );
    }
    await new Promise((done) => setTimeout(done, 50));
  }
  const auth = options.password === undefined ? "" : `:${encodeURIComponent(options.password)}@`;
  return { port, url: `redis://${auth}127.0.0.1:${port}`, log: () => output, stop };
}

/** True when something on the port answers a RESP PING (+PONG, or -NOAUTH with a password). */
function answersPing(port: number): Promise<boolean> {
  return new Promise((done) => {
    const socket = createConnection({ host: "127.0.0.1", port });
    let reply = "";
    const finish = (answer: boolean) => {
      socket.destroy();
      done(answer);
    };
    socket.setTimeout(1000, () => finish(false));
    socket.once("error", () => finish(false));
    socket.once("connect", () => socket.write("*1\r\n$4\r\nPING\r\n"));
    socket.on("data", (chunk: Buffer) => {
      reply += chunk.toString();
      if (reply.includes("\r\n")) finish(reply.startsWith("+PONG") || reply.startsWith("-NOAUTH"));
    });
  });
}
