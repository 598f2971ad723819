/// <reference types="vite/client" />
/// <reference lib="dom" />
import { startPlayground } from "./ui/app.js";
import { RunClient } from "./ui/run-client.js";
import "./ui/playground.css";

// The playground's entry: the run worker (its own bundle, loaded now so the first Run does not
// wait for it) and the page.

const client = new RunClient(
  () => new Worker(new URL("./worker/worker.ts", import.meta.url), { type: "module" }),
);

startPlayground(client).catch((error: unknown) => {
  const message = error instanceof Error ? error.message : String(error);
  const progress = document.getElementById("progress");
  if (progress !== null) progress.textContent = `The playground could not start: ${message}`;
  document.body.dataset.ready = "error";
  document.body.dataset.error = message;
});
