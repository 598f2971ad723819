/// <reference lib="dom" />

// "Open in Perfetto": the trace handed to ui.perfetto.dev from the page, as Perfetto's docs describe
// (perfetto.dev/docs/visualization/deep-linking-to-perfetto-ui): open the UI in a new window, send
// it "PING" until it answers "PONG" (its message channel is not buffered), then post
// `{perfetto: {buffer, title}}`. The trace never leaves the machine but for that window.

/** Where the Perfetto UI is, and the only origin whose "PONG" counts. */
export const PERFETTO_ORIGIN = "https://ui.perfetto.dev";

/** How often "PING" is sent until the UI answers, ms. */
export const PING_INTERVAL_MS = 100;

/** How long the UI has to answer before the page gives up, ms. */
export const PERFETTO_TIMEOUT_MS = 60_000;

/** What Perfetto's window is to the page: something to post to. */
export interface PerfettoWindow {
  postMessage(message: unknown, targetOrigin: string): void;
}

/** The browser as {@link openInPerfetto} uses it (a test passes its own). */
export interface PerfettoHost {
  /** Opens `url` in a new window; null when a popup blocker refused. */
  open(url: string): PerfettoWindow | null;
  /** Calls `listener` for each message the page receives, until the returned function is called. */
  listen(listener: (message: { readonly data: unknown; readonly origin: string }) => void): () => void;
  /** Calls `tick` every `ms` (the first at once), until the returned function is called. */
  every(ms: number, tick: () => void): () => void;
  /** Calls `done` once after `ms`, unless the returned function is called first. */
  after(ms: number, done: () => void): () => void;
}

/** The page's own window, timers and messages. */
export const browserPerfettoHost: PerfettoHost = {
  open: (url) => window.open(url, "_blank"),
  listen(listener) {
    const onMessage = (event: MessageEvent) => listener({ data: event.data, origin: event.origin });
    window.addEventListener("message", onMessage);
    return () => window.removeEventListener("message", onMessage);
  },
  every(ms, tick) {
    tick();
    const id = setInterval(tick, ms);
    return () => clearInterval(id);
  },
  after(ms, done) {
    const id = setTimeout(done, ms);
    return () => clearTimeout(id);
  },
};

/**
 * Opens ui.perfetto.dev and hands it the trace `load` fetches, titled `title`; resolves with the
 * bytes posted once they are. Call it from a click (the window opens at once, before the trace is
 * fetched, so popup blockers let it through). Rejects, saying what to do, when the window is
 * blocked, the trace cannot be fetched, or the UI does not answer within `timeoutMs`.
 */
export function openInPerfetto(
  load: () => Promise<ArrayBuffer>,
  title: string,
  host: PerfettoHost = browserPerfettoHost,
  timeoutMs = PERFETTO_TIMEOUT_MS,
): Promise<number> {
  const target = host.open(PERFETTO_ORIGIN);
  if (target === null) {
    return Promise.reject(
      new Error(
        `the browser blocked the window of ${PERFETTO_ORIGIN}: allow pop-ups for this page and try again`,
      ),
    );
  }
  const stops: (() => void)[] = [];
  const stop = () => {
    for (const each of stops.splice(0)) each();
  };
  let answered = false;
  let stopPings = () => {};
  const ready = new Promise<void>((resolve, reject) => {
    stops.push(
      host.listen((message) => {
        if (message.origin !== PERFETTO_ORIGIN || message.data !== "PONG") return;
        answered = true;
        stopPings();
        resolve();
      }),
      host.after(timeoutMs, () =>
        reject(
          new Error(
            `${PERFETTO_ORIGIN} did not answer within ${timeoutMs / 1000} s (is it reachable from this browser?); download the trace and open it there instead`,
          ),
        ),
      ),
    );
    // Pings stop at the first PONG (it may come during the first, sent at once).
    stopPings = host.every(PING_INTERVAL_MS, () => {
      if (!answered) target.postMessage("PING", PERFETTO_ORIGIN);
    });
    if (answered) stopPings();
    stops.push(stopPings);
  });
  return Promise.all([load(), ready])
    .then(([buffer]) => {
      stop();
      target.postMessage({ perfetto: { buffer, title } }, PERFETTO_ORIGIN);
      return buffer.byteLength;
    })
    .finally(stop);
}
