import { createServer, type Server, type Socket } from "node:net";
import { isKbError } from "@kb/errors";
import { describe, expect, it } from "vitest";
import { CONNECT_TIMEOUT_MS, checkRedis, parseRedisUrl, redactRedisUrl, redactText } from "./connection.js";

/** The SWEEP_QUEUE message `run` throws (fails the test when it throws nothing or something else). */
async function queueError(run: () => unknown): Promise<string> {
  try {
    await run();
  } catch (error) {
    if (isKbError(error) && error.code === "SWEEP_QUEUE") return error.message;
    throw error;
  }
  throw new Error("expected a SWEEP_QUEUE error");
}

/** A TCP server on 127.0.0.1 that `onSocket` answers; closed by the returned function. */
async function tcpServer(onSocket: (socket: Socket) => void): Promise<{ port: number; close: () => void }> {
  const sockets: Socket[] = [];
  const server: Server = createServer((socket) => {
    sockets.push(socket);
    onSocket(socket);
  });
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
  const address = server.address();
  const port = typeof address === "object" && address !== null ? address.port : 0;
  return {
    port,
    close: () => {
      for (const socket of sockets) socket.destroy();
      server.close();
    },
  };
}

describe("parseRedisUrl", () => {
  it("reads host, port and database, with 6379 and 0 when left out", () => {
    const target = parseRedisUrl("redis://queue-host:6380/3");
    expect(target.where).toBe("queue-host:6380");
    expect(target.redacted).toBe("redis://queue-host:6380/3");
    expect(target.secret).toBeUndefined();
    expect(target.options).toMatchObject({ host: "queue-host", port: 6380, db: 3 });
    expect(target.options).not.toHaveProperty("password");
    expect(target.options).not.toHaveProperty("tls");
    expect(parseRedisUrl("redis://127.0.0.1").options).toMatchObject({
      host: "127.0.0.1",
      port: 6379,
      db: 0,
    });
    expect(parseRedisUrl("redis://h:7000/").options).toMatchObject({ port: 7000, db: 0 });
  });

  it("reads an IPv6 host without its brackets", () => {
    const target = parseRedisUrl("redis://[::1]:7001");
    expect(target.options).toMatchObject({ host: "::1", port: 7001 });
    expect(target.where).toBe("[::1]:7001");
  });

  it("decodes user and password, keeps the password out of where and redacted", () => {
    const target = parseRedisUrl("redis://kb:p%40ss%2Fw0rd@queue-host:6379/1");
    expect(target.options).toMatchObject({ username: "kb", password: "p@ss/w0rd", db: 1 });
    expect(target.secret).toBe("p@ss/w0rd");
    expect(target.redacted).toBe("redis://kb:***@queue-host:6379/1");
    expect(target.where).toBe("queue-host:6379");
    const passwordOnly = parseRedisUrl("redis://:s3cret@h");
    expect(passwordOnly.options).not.toHaveProperty("username");
    expect(passwordOnly.options).toMatchObject({ password: "s3cret" });
  });

  it("turns TLS on for rediss://, checking the certificate against the host name", () => {
    const target = parseRedisUrl("rediss://:s3cret@redis.example.org:6380");
    expect(target.options.tls).toEqual({ servername: "redis.example.org" });
    expect(target.redacted).toBe("rediss://:***@redis.example.org:6380");
  });

  it("reconnects for ever, waiting at most 5 s between attempts (the watch decides when to give up)", () => {
    const retry = parseRedisUrl("redis://h").options.retryStrategy as (times: number) => number | null;
    expect(retry(1)).toBe(200);
    expect(retry(30)).toBe(5000);
    expect(retry(100_000)).toBe(5000);
  });

  it.each([
    ["localhost:6379", '"localhost:6379" is not a Redis URL: it has no scheme. Write redis://localhost:6379'],
    [":s3cret@h:6379", '":***@h:6379" is not a Redis URL: it has no scheme. Write redis://:***@h:6379'],
    [
      "http://u:s3cret@h:6379",
      '"http://u:***@h:6379" is not a Redis URL: it starts with http:// where redis:// or rediss:// (TLS) was expected.',
    ],
    ["redis://:s3cret@h:99999", '"redis://:***@h:99999" is not a Redis URL: expected redis://'],
    ["redis://:s3cret@h/x", '"redis://:***@h/x": the database after the last / is a whole number'],
    ["redis://:s3cret@h/-1", 'whole number (redis://host:6379/0); got "-1"'],
    ["redis:///0", '"redis:///0" names no host: write redis://HOST:PORT.'],
    // An unescaped / in the password ends the host part: still hidden.
    ["redis://:s3/cret@h:6379", '"redis://:***@h:6379" is not a Redis URL'],
  ])("refuses %s with a SWEEP_QUEUE error that hides the password", async (url, expected) => {
    const message = await queueError(() => parseRedisUrl(url));
    expect(message).toContain(expected);
    expect(message).not.toMatch(/s3\/?cret/);
  });
});

describe("redactRedisUrl and redactText", () => {
  it("replace every password of a URL, whatever characters it has", () => {
    expect(redactRedisUrl("redis://kb:hunter2@h:6379/0")).toBe("redis://kb:***@h:6379/0");
    expect(redactRedisUrl("redis://:a@b#c?d@h")).toBe("redis://:***@h");
    expect(redactRedisUrl("redis://justasecret@h")).toBe("redis://***@h");
    expect(redactRedisUrl("redis://h:6379")).toBe("redis://h:6379");
  });

  it("hide URL passwords in a text, and the target's own password where it shows up bare or encoded", () => {
    const target = parseRedisUrl("redis://kb:p%40ss-word@h:6379");
    const text =
      "connect to redis://kb:p%40ss-word@h:6379 failed; also rediss://:other@x:1 'redis://u:z@y' " +
      "AUTH p@ss-word rejected (p%40ss-word)";
    const redacted = redactText(text, target);
    expect(redacted).toBe(
      "connect to redis://kb:***@h:6379 failed; also rediss://:***@x:1 'redis://u:***@y' AUTH *** rejected (***)",
    );
    expect(redactText("no URL here", target)).toBe("no URL here");
  });
});

describe("checkRedis", () => {
  it("is a SWEEP_QUEUE error saying nothing listens when the port is closed, without the password", async () => {
    const closed = await tcpServer(() => {});
    closed.close();
    const started = performance.now();
    const message = await queueError(() =>
      checkRedis(parseRedisUrl(`redis://:s3cret@127.0.0.1:${closed.port}`)),
    );
    expect(performance.now() - started).toBeLessThan(CONNECT_TIMEOUT_MS);
    expect(message).toContain(
      `cannot use Redis at 127.0.0.1:${closed.port} (redis://:***@127.0.0.1:${closed.port})`,
    );
    expect(message).toContain("nothing listens there. Start redis-server there");
    expect(message).not.toContain("s3cret");
  });

  it("says the password is wrong when the server refuses it", async () => {
    // A server that answers like redis-server with requirepass and another password: one error
    // per command (ioredis 6 sends HELLO and two CLIENT SETINFO in one packet and awaits three).
    const server = await tcpServer((socket) =>
      socket.on("data", (data: Buffer) => {
        const commands = data
          .toString()
          .split("\r\n")
          .filter((line) => line.startsWith("*")).length;
        socket.write(
          "-WRONGPASS invalid username-password pair or user is disabled.\r\n".repeat(Math.max(commands, 1)),
        );
      }),
    );
    try {
      const message = await queueError(() =>
        checkRedis(parseRedisUrl(`redis://:s3cret@127.0.0.1:${server.port}`)),
      );
      expect(message).toContain("WRONGPASS invalid username-password pair or user is disabled");
      expect(message).toContain("The server wants another user or password");
      expect(message).not.toContain("s3cret");
    } finally {
      server.close();
    }
  });

  it("gives up on a server that never answers within the connect timeout, rather than hang", async () => {
    const silent = await tcpServer(() => {});
    try {
      const started = performance.now();
      const message = await queueError(() => checkRedis(parseRedisUrl(`redis://127.0.0.1:${silent.port}`)));
      expect(performance.now() - started).toBeLessThan(CONNECT_TIMEOUT_MS + 2000);
      expect(message).toContain(`cannot use Redis at 127.0.0.1:${silent.port}`);
      expect(message).toContain("Check that redis-server runs there");
    } finally {
      silent.close();
    }
  }, 15_000);
});
