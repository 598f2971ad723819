import { DTYPE_BYTES, type Dtype, shapeSize } from "@kb/tensor";
import type { CallScope } from "./call-scope.js";
import { readMemory, writeMemory } from "./device-access.js";
import type { TensorHandle } from "./handles.js";
import type { RecvOptions } from "./options.js";
import { checkDirection, checkDtype, checkOwned, checkShape } from "./validate.js";
import { valuesOf } from "./values.js";

// The bodies of the IPCQ calls (ADR-0046 D3.10; context.ts documents them): sends to and
// receives from a neighbouring PE, with the payload's bytes in phase 1 when the sender knew them.

/** A receive the PE_CPU completed: the slot the payload is in, and whether phase 1 knows its bytes. */
interface Received {
  readonly slot: number;
  readonly hasData: boolean;
}

/** `tl.send(direction, src)`. */
export async function runSend(scope: CallScope, direction: string, src: TensorHandle): Promise<void> {
  const tl = scope.tl;
  checkOwned(tl, "send", src);
  checkDirection(tl, "send", direction);
  const source = await scope.inTcm("send", src);
  // Phase 1 moves real bytes only for data the kernel has (loads, constants, received data).
  const data = tl.memory !== null ? (valuesOf(tl, source)?.bytes.slice() ?? null) : null;
  await scope.dispatch();
  await scope.issue({
    kind: "ipcq_send",
    direction,
    src: source.address,
    bytes: source.nbytes,
    dtype: source.dtype,
    ...(data !== null ? { data } : {}),
  });
}

/**
 * Issues the `ipcq_recv` of `tl.${call}` and waits until the PE_CPU is done with it (a blocking
 * receive: the payload arrived; an async one: issued). Returns the command's program position and
 * `finish`, which makes the received handle once the payload arrived.
 */
export async function runReceive(
  scope: CallScope,
  call: string,
  direction: string | null,
  options: RecvOptions,
  consume: boolean,
  async: boolean,
): Promise<{ index: number; finish: () => TensorHandle }> {
  const tl = scope.tl;
  if (direction !== null) checkDirection(tl, call, direction);
  const shape = options?.shape;
  checkShape(tl, call, shape);
  const dtype = options.dtype ?? "f16";
  checkDtype(tl, call, dtype);
  const nbytes = shapeSize(shape) * DTYPE_BYTES[dtype];
  let received: Received | null = null;
  await scope.dispatch();
  const issued = scope.sink.issue({
    kind: "ipcq_recv",
    direction,
    bytes: nbytes,
    dtype,
    mode: options.dstAddr !== undefined ? "copy_to_dst" : "return_slot",
    dst: options.dstAddr ?? null,
    consume,
    ...(async ? { async: true } : {}),
    onReceived: (slot, hasData) => {
      received = { slot, hasData };
    },
  });
  await issued.done;
  const finish = () => receivedHandle(scope, call, shape, dtype, options.dstAddr, received);
  return { index: issued.index, finish };
}

/** The handle of a completed receive (a placeholder in command-list mode). */
function receivedHandle(
  scope: CallScope,
  call: string,
  shape: readonly number[],
  dtype: Dtype,
  dstAddr: number | undefined,
  received: Received | null,
): TensorHandle {
  const at = (address: number) =>
    scope.handle({ op: call, origin: "recv", shape, dtype, space: "tcm", address });
  const handle =
    dstAddr !== undefined
      ? at(dstAddr)
      : received !== null
        ? at(received.slot)
        : scope.scratchHandle(call, "recv", shape, dtype);
  const tl = scope.tl;
  const memory = tl.memory;
  if (memory !== null && received !== null) {
    if (received.hasData) {
      const bytes = readMemory(tl, memory, received.slot, handle.nbytes, `tl.${call}`);
      // Written again through this memory so the bytes count as known where they are read.
      writeMemory(tl, memory, dstAddr ?? received.slot, bytes, `tl.${call}`);
    } else {
      // The sender's tile was a pending compute result: so is the payload.
      memory.markPending?.(handle.address, handle.nbytes);
    }
  }
  return handle;
}
