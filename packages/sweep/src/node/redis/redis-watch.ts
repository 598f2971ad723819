import { KbError } from "@kb/errors";
import { Redis } from "ioredis";
import { RECONNECT_CAP_MS } from "../../lost-worker.js";
import {
  CONNECT_TIMEOUT_MS,
  type RedisTarget,
  reconnectDelayMs,
  redactText,
  withTimeout,
} from "./connection.js";

// Whether a sweep's Redis still answers, for the sweep and its workers: their BullMQ connections
// reconnect for ever (connection.ts), so a server gone for good would otherwise be silence. One
// PING every few seconds on a connection of its own; a line when Redis goes away, at most one a
// minute while it stays away, one when it is back; and, when asked, a SWEEP_QUEUE error once it
// has been away too long, for the caller to exit on (a supervisor restarts a worker). Wall-clock
// timers: this watches a server, not a simulation.

/** How often the watch sends PING, ms. */
const PING_EVERY_MS = 2000;
/** At most one "still unreachable" line per this many ms. */
const LOG_EVERY_MS = 60_000;

/** Options of {@link watchRedis}. */
export interface RedisWatchOptions {
  readonly target: RedisTarget;
  /** Who is waiting, for the error: `kb worker`, `kb sweep`. */
  readonly who: string;
  /** Give up once unreachable this long, ms; 0 waits for ever. */
  readonly giveUpMs: number;
  /** Told (redacted) when Redis goes away, while it stays away (rate-limited) and when it is back. */
  readonly onLine: (line: string) => void;
  /** Ping interval, ms (tests). */
  readonly everyMs?: number;
}

/** A running watch. */
export interface RedisWatch {
  /** Resolves with a `SWEEP_QUEUE` error once Redis has been unreachable for `giveUpMs`; never with 0. */
  readonly gaveUp: Promise<KbError>;
  /** True while the last PING failed. */
  readonly down: () => boolean;
  stop(): Promise<void>;
}

/** Starts watching `target` (see the file's comment). */
export function watchRedis(options: RedisWatchOptions): RedisWatch {
  const { target, who, giveUpMs } = options;
  const client = new Redis({
    ...target.options,
    // A PING fails at once while disconnected instead of waiting for the connection.
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    retryStrategy: reconnectDelayMs,
  });
  // The connection's own error (refused, reset) says more than a PING's "Stream isn't writeable".
  let connectionError: string | null = null;
  client.on("error", (error: Error) => {
    connectionError = error.message;
  });
  client.on("ready", () => {
    connectionError = null;
  });
  let resolveGaveUp: (error: KbError) => void = () => {};
  const gaveUp = new Promise<KbError>((resolve) => (resolveGaveUp = resolve));
  let downSince: number | null = null;
  let loggedAt = 0;
  let stopped = false;
  let checking = false;
  const seconds = (ms: number) => `${Math.round(ms / 1000)} s`;
  const limit = giveUpMs > 0 ? `; giving up after ${seconds(giveUpMs)}` : "; retrying until it is back";

  const check = async (): Promise<void> => {
    let why: string | null = null;
    try {
      await withTimeout(client.ping(), CONNECT_TIMEOUT_MS);
    } catch (error) {
      why = redactText(connectionError ?? (error instanceof Error ? error.message : String(error)), target);
    }
    if (stopped) return;
    const now = performance.now();
    if (why === null) {
      if (downSince !== null)
        options.onLine(`Redis at ${target.where} answers again, after ${seconds(now - downSince)}.`);
      downSince = null;
      return;
    }
    if (downSince === null) {
      downSince = now;
      loggedAt = now;
      options.onLine(
        `Redis at ${target.where} does not answer (${why}); reconnecting every ${seconds(RECONNECT_CAP_MS)} at most${limit}.`,
      );
    } else if (now - loggedAt >= LOG_EVERY_MS) {
      loggedAt = now;
      options.onLine(
        `Redis at ${target.where} has not answered for ${seconds(now - downSince)} (${why})${limit}.`,
      );
    }
    if (giveUpMs > 0 && now - downSince >= giveUpMs) {
      stopped = true;
      clearInterval(timer);
      resolveGaveUp(
        new KbError(
          "SWEEP_QUEUE",
          `${who}: Redis at ${target.where} (${target.redacted}) has not answered for ${seconds(now - downSince)} (${why}): giving up. Start redis-server there again (or check the network), then run the same command again; raise --give-up-s (0: wait for ever) to wait longer.`,
        ),
      );
    }
  };
  const timer = setInterval(() => {
    if (stopped || checking) return;
    checking = true;
    void check().finally(() => (checking = false));
  }, options.everyMs ?? PING_EVERY_MS);
  // The caller's connections keep the process alive, not this watch.
  timer.unref();

  return {
    gaveUp,
    down: () => downSince !== null,
    stop: async () => {
      stopped = true;
      clearInterval(timer);
      // A PING in flight fails at once: not waited for.
      client.disconnect();
    },
  };
}
