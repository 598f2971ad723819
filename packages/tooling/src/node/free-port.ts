// A free TCP port for a test's server (verdaccio, redis-server, ...): one definition for all.
import { createServer } from "node:net";

/** A TCP port nothing listens on now on 127.0.0.1. */
export function freePort(): Promise<number> {
  return new Promise((done, fail) => {
    const server = createServer();
    server.once("error", fail);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => done(typeof address === "object" && address !== null ? address.port : 0));
    });
  });
}
