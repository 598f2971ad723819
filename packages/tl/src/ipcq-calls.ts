import type { TLContext } from "./context.js";
import { RecvFuture, type TensorHandle } from "./handles.js";
import { runReceive, runSend } from "./ipcq.js";
import type { RecvOptions } from "./options.js";

// The IPCQ calls of `tl` (ADR-0046 D3.10): sends to and receives from a neighbouring PE over the
// inter-PE queues of `pe_cpu_v1`. Their work is in ipcq.ts.

/** The IPCQ calls of `tl` (installed on `TLContext` by context.ts). */
export interface IpcqCalls {
  /**
   * Sends a TCM handle to the neighbour in `direction` (IPCQ): blocks until a slot is free there
   * (credit-based flow control), then the PE_DMA moves the bytes while the kernel goes on. The
   * payload is read at issue (ADR-0046 D3.10 snapshot rule): changing or receiving into the
   * source afterwards does not change what arrives. The kernel's end waits for every arrival.
   */
  send(direction: string, src: TensorHandle): Promise<void>;

  /**
   * Receives from `direction` (where the data comes from: what the west neighbour sends "east"
   * arrives from "west"), blocking until a payload arrived and paying the slot read. With
   * `dstAddr` the payload is copied there and the slot is freed at once; else the handle is the
   * slot itself, the kernel's until its next receive from that direction (or its end).
   */
  recv(direction: string | null, options: RecvOptions): Promise<TensorHandle>;

  /** DIAGNOSTIC ONLY: `recv` without the slot-read latency; production kernels must use `recv`. */
  recvNoConsume(direction: string | null, options: RecvOptions): Promise<TensorHandle>;

  /** A non-blocking receive: `await tl.wait(future)` gives the handle. */
  recvAsync(direction: string, options: RecvOptions): Promise<RecvFuture>;
}

export const ipcqCalls: IpcqCalls & ThisType<TLContext> = {
  send(direction, src) {
    return this._call("send", (site) => {
      site.withArguments(JSON.stringify(direction));
      return runSend(this._scope, direction, src);
    });
  },

  recv(direction, options) {
    return this._call("recv", async (site) => {
      site.withArguments(JSON.stringify(direction));
      const { finish } = await runReceive(this._scope, "recv", direction, options, true, false);
      return finish();
    });
  },

  recvNoConsume(direction, options) {
    return this._call("recvNoConsume", async (site) => {
      site.withArguments(JSON.stringify(direction));
      const { finish } = await runReceive(this._scope, "recvNoConsume", direction, options, false, false);
      return finish();
    });
  },

  recvAsync(direction, options) {
    return this._call("recvAsync", async (site) => {
      site.withArguments(JSON.stringify(direction));
      const { index, finish } = await runReceive(this._scope, "recvAsync", direction, options, true, true);
      const future = new RecvFuture(this._completionId(), index, finish, this);
      this._outstanding.add(future);
      return future;
    });
  },
};
