import { KbError } from "@kb/errors";
import type { RedisOptions } from "bullmq";
import { Redis } from "ioredis";
import { RECONNECT_CAP_MS } from "../../lost-worker.js";

/** A Redis server as a `redis://` or `rediss://` URL names it, with its secret kept apart. */
export interface RedisTarget {
  /** `host:port`, safe to print. */
  readonly where: string;
  /** The URL with its password replaced by `***`, safe to print. */
  readonly redacted: string;
  /** ioredis options of the server (password and TLS included); never print them. */
  readonly options: RedisOptions;
  /** The password, kept to {@link RedisTarget.redact} it out of texts that came from elsewhere. */
  readonly secret: string | undefined;
}

/** How long a first connection may take before the server counts as unreachable, ms. */
export const CONNECT_TIMEOUT_MS = 5000;

/** Wait before reconnection attempt `times` (1, 2, ...), ms: 200 ms more each time, at most {@link RECONNECT_CAP_MS}. */
export function reconnectDelayMs(times: number): number {
  return Math.min(times * 200, RECONNECT_CAP_MS);
}

/**
 * Parses a Redis URL: `redis://[user[:password]@]host[:port][/db]`, or `rediss://` for TLS.
 * Throws `SWEEP_QUEUE` naming the redacted URL when it is not one.
 */
export function parseRedisUrl(url: string): RedisTarget {
  if (!url.includes("://")) {
    throw new KbError(
      "SWEEP_QUEUE",
      `"${redactRedisUrl(url)}" is not a Redis URL: it has no scheme. Write redis://${redactRedisUrl(url)} (rediss:// for TLS).`,
    );
  }
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new KbError(
      "SWEEP_QUEUE",
      `"${redactRedisUrl(url)}" is not a Redis URL: expected redis://[user:password@]host[:port][/db] (rediss:// for TLS), such as redis://127.0.0.1:6379.`,
    );
  }
  if (parsed.protocol !== "redis:" && parsed.protocol !== "rediss:") {
    throw new KbError(
      "SWEEP_QUEUE",
      `"${redactRedisUrl(url)}" is not a Redis URL: it starts with ${parsed.protocol}// where redis:// or rediss:// (TLS) was expected.`,
    );
  }
  const host = parsed.hostname.replace(/^\[(.*)\]$/, "$1");
  if (host === "") {
    throw new KbError("SWEEP_QUEUE", `"${redactRedisUrl(url)}" names no host: write redis://HOST:PORT.`);
  }
  const port = parsed.port === "" ? 6379 : Number(parsed.port);
  const dbText = parsed.pathname.replace(/^\//, "");
  const db = dbText === "" ? 0 : Number(dbText);
  if (!Number.isInteger(db) || db < 0) {
    throw new KbError(
      "SWEEP_QUEUE",
      `"${redactRedisUrl(url)}": the database after the last / is a whole number (redis://host:6379/0); got "${dbText}".`,
    );
  }
  const username = decodedPart(parsed.username, "user name", url);
  const password = parsed.password === "" ? undefined : decodedPart(parsed.password, "password", url);
  const where = `${parsed.hostname}:${port}`;
  return {
    where,
    redacted: redactRedisUrl(url),
    secret: password,
    options: {
      host,
      port,
      db,
      ...(username !== "" ? { username } : {}),
      ...(password !== undefined ? { password } : {}),
      ...(parsed.protocol === "rediss:" ? { tls: { servername: host } } : {}),
      connectTimeout: CONNECT_TIMEOUT_MS,
      // BullMQ's blocking connections need null; a dead server shows as a failing command
      // through the retry strategy below rather than a hang.
      maxRetriesPerRequest: null,
      // Reconnect for ever (a restarted server, a network away for a while): whether to give up
      // is the watch's decision (redis-watch.ts), which says so rather than leave a silent client.
      retryStrategy: reconnectDelayMs,
    },
  };
}

/**
 * A user name or password of a URL, percent-decoded; `SWEEP_QUEUE` naming the redacted URL when
 * it has a `%` that is not a percent-escape (`pa%ss`), never the part itself.
 */
function decodedPart(part: string, what: "user name" | "password", url: string): string {
  try {
    return decodeURIComponent(part);
  } catch {
    throw new KbError(
      "SWEEP_QUEUE",
      `"${redactRedisUrl(url)}": its ${what} has a % that is not followed by two hex digits. A Redis URL's user name and password are percent-encoded: write % as %25 (and @ as %40, : as %3A, / as %2F), such as redis://:ONE%25TWO@HOST:PORT for the password ONE%TWO.`,
    );
  }
}

/**
 * `url` with the password of its user part replaced by `***` (the rest kept, for a message). The
 * user part runs to the URL's last `@`, so a password with an unescaped `/`, `?`, `#` or `@` is
 * hidden too; a user part without `:` is hidden whole (some clients read it as a password), and so
 * is one of a URL without its scheme (`:secret@host:6379`).
 */
export function redactRedisUrl(url: string): string {
  return url.replace(
    /^([a-z][a-z0-9+.-]*:\/\/)?(.*)@/i,
    (_whole, scheme: string | undefined, user: string) => {
      const colon = user.indexOf(":");
      return `${scheme ?? ""}${colon === -1 ? "***" : `${user.slice(0, colon)}:***`}@`;
    },
  );
}

/**
 * `text` with every Redis URL's password and the target's own password (if it shows up bare, as
 * in a driver's message) replaced by `***`: for every message, log line and error that leaves
 * kb about a queue.
 */
export function redactText(text: string, target?: RedisTarget): string {
  let result = text.replace(/rediss?:\/\/[^\s"'<>]*/gi, (url) => redactRedisUrl(url));
  const secret = target?.secret;
  if (secret !== undefined && secret.length > 0) result = result.split(secret).join("***");
  if (target !== undefined) {
    const encoded = target.secret === undefined ? "" : encodeURIComponent(target.secret);
    if (encoded.length > 0) result = result.split(encoded).join("***");
  }
  return result;
}

/**
 * Throws `SWEEP_QUEUE` for a queue name BullMQ refuses (empty, or with a `:`), before anything
 * connects: BullMQ's own error would be a crash.
 */
export function checkQueueName(queue: string): void {
  if (queue !== "" && !queue.includes(":")) return;
  throw new KbError(
    "SWEEP_QUEUE",
    `queue name ${JSON.stringify(queue)}: a BullMQ queue name is not empty and has no ":". Give --queue a name of letters, digits, - _ and . (kb sweep --redis prints the one it uses, kb-sweep-NAME by default).`,
  );
}

/**
 * Connects to the target and sends PING, so that a wrong host, port or password is a
 * `SWEEP_QUEUE` error within {@link CONNECT_TIMEOUT_MS} (ioredis alone would retry forever).
 */
export async function checkRedis(target: RedisTarget): Promise<void> {
  const client = new Redis({
    ...target.options,
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
    enableOfflineQueue: false,
  });
  // ioredis reports the cause (refused, wrong password) as an event; the PING then only says
  // "Connection is closed".
  let cause: Error | undefined;
  client.on("error", (error: Error) => {
    cause ??= error;
  });
  try {
    await withTimeout(
      client.connect().then(() => client.ping()),
      CONNECT_TIMEOUT_MS + 1000,
    );
    // A database the server does not have fails SELECT, reported as an event only.
    if (cause !== undefined) throw cause;
  } catch (error) {
    throw new KbError(
      "SWEEP_QUEUE",
      `cannot use Redis at ${target.where} (${target.redacted}): ${whyNot(cause ?? error, target)}`,
    );
  } finally {
    client.disconnect();
  }
}

/** Why a first connection failed, and what to do, redacted. */
function whyNot(error: unknown, target: RedisTarget): string {
  const message = redactText(error instanceof Error ? error.message : String(error), target).replace(
    /\.+$/,
    "",
  );
  const code = typeof error === "object" && error !== null ? (error as { code?: unknown }).code : undefined;
  if (/WRONGPASS|NOAUTH|invalid password|invalid username-password/i.test(message)) {
    return `${message}. The server wants another user or password: give it in the URL (redis://USER:PASSWORD@HOST:PORT, or through KB_REDIS_URL to keep it out of ps).`;
  }
  if (code === "ECONNREFUSED") {
    return `${message}: nothing listens there. Start redis-server there (or check the host and port), or give another URL.`;
  }
  return `${message}. Check that redis-server runs there and that the host, port, password and firewall let this machine in, or give another URL.`;
}

/** A BullMQ queue, queue events or worker as {@link dropConnections} closes it. */
export interface Droppable {
  /** Its close (a worker's forced one). */
  readonly close: () => Promise<unknown>;
  /** Its ioredis clients (its BullMQ backend's, a worker's blocking one too). */
  readonly clients: readonly (Promise<{ disconnect(): void }> | undefined)[];
}

/**
 * Closes BullMQ objects without waiting for a Redis that does not answer (their close and
 * disconnect wait for a reply or an end that a connection retrying a dead server never gets):
 * each close is started, then its client is disconnected, which stops its reconnection timers so
 * that the process can exit.
 */
export async function dropConnections(items: readonly Droppable[]): Promise<void> {
  await Promise.allSettled(
    items.map(async (item) => {
      void item.close().catch(() => {});
      for (const client of item.clients)
        if (client !== undefined) (await withTimeout(client, 1000)).disconnect();
    }),
  );
}

/** `promise`, or a rejection after `ms`. */
export function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer in ${ms / 1000} s`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
