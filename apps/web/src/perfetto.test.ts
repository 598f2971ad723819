import { describe, expect, it } from "vitest";
import { openInPerfetto, PERFETTO_ORIGIN, type PerfettoHost } from "./perfetto.js";

/** A fake browser: the opened window records what it is sent; `answer` is how it answers a PING. */
function fakeHost(answer: (reply: (data: unknown, origin: string) => void, pings: number) => void) {
  const posted: { message: unknown; origin: string }[] = [];
  const opened: string[] = [];
  let listener: ((message: { data: unknown; origin: string }) => void) | null = null;
  let ticker: (() => void) | null = null;
  let timeout: (() => void) | null = null;
  let pings = 0;
  const host: PerfettoHost = {
    open(url) {
      opened.push(url);
      return {
        postMessage(message, origin) {
          posted.push({ message, origin });
          if (message === "PING") answer((data, from) => listener?.({ data, origin: from }), ++pings);
        },
      };
    },
    listen(each) {
      listener = each;
      return () => {
        listener = null;
      };
    },
    every(_ms, tick) {
      ticker = tick;
      tick();
      return () => {
        ticker = null;
      };
    },
    after(_ms, done) {
      timeout = done;
      return () => {
        timeout = null;
      };
    },
  };
  return {
    host,
    posted,
    opened,
    tick: () => ticker?.(),
    expire: () => timeout?.(),
    listening: () => listener !== null,
  };
}

describe("Open in Perfetto", () => {
  it("pings ui.perfetto.dev until it answers PONG, then posts the trace and its title", async () => {
    // The UI answers the third PING; a PONG from another origin does not count.
    const fake = fakeHost((reply, pings) => {
      if (pings === 2) reply("PONG", "https://evil.example");
      if (pings === 3) reply("PONG", PERFETTO_ORIGIN);
    });
    const buffer = new Uint8Array([1, 2, 3]).buffer;
    const posted = openInPerfetto(async () => buffer, "run.trace.json", fake.host);
    fake.tick();
    fake.tick();
    expect(await posted).toBe(3);
    expect(fake.opened).toEqual([PERFETTO_ORIGIN]);
    expect(fake.posted).toEqual([
      { message: "PING", origin: PERFETTO_ORIGIN },
      { message: "PING", origin: PERFETTO_ORIGIN },
      { message: "PING", origin: PERFETTO_ORIGIN },
      { message: { perfetto: { buffer, title: "run.trace.json" } }, origin: PERFETTO_ORIGIN },
    ]);
    // Done: no more pings, no listener left.
    fake.tick();
    expect(fake.posted.length).toBe(4);
    expect(fake.listening()).toBe(false);
  });

  it("says what to do when the window is blocked or the UI never answers", async () => {
    const blocked = fakeHost(() => {});
    blocked.host.open = () => null;
    await expect(openInPerfetto(async () => new ArrayBuffer(1), "t", blocked.host)).rejects.toThrow(
      /blocked the window of https:\/\/ui\.perfetto\.dev: allow pop-ups/,
    );
    const silent = fakeHost(() => {});
    const posted = openInPerfetto(async () => new ArrayBuffer(1), "t", silent.host, 5000);
    silent.expire();
    await expect(posted).rejects.toThrow("did not answer within 5 s");
    expect(silent.posted.every((each) => each.message === "PING")).toBe(true);
  });
});
