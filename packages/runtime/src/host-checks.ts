import { KbError } from "@kb/errors";
import { DTYPE_BYTES, type Dtype, formatShape, isDtype } from "@kb/tensor";
import { DeviceTensor } from "./device-tensor.js";
import type { DeviceMemory } from "./memory/device-memory.js";
import type { FreeOptions } from "./simulator-options.js";

/**
 * The bytes of a `dtype` tensor of `shape`, computed without building it. Throws
 * `RUNTIME_INVALID` for an unknown dtype and `TENSOR_INVALID` for a bad or absurd shape.
 */
export function tensorBytes(call: string, name: string, shape: readonly number[], dtype: Dtype): number {
  const shown = Array.isArray(shape) ? formatShape(shape) : String(shape);
  const what = `${call}(${JSON.stringify(name)}, ${shown}, ${String(dtype)})`;
  if (!isDtype(dtype)) {
    throw new KbError(
      "RUNTIME_INVALID",
      `${what}: unknown dtype ${JSON.stringify(dtype) ?? String(dtype)}; use f32, f16, bf16, i8 or i32.`,
    );
  }
  if (!Array.isArray(shape)) {
    throw new KbError(
      "TENSOR_INVALID",
      `${what}: the shape must be an array of dimensions, got ${typeof shape}. Pass e.g. [rows, cols].`,
    );
  }
  let size = 1;
  for (let axis = 0; axis < shape.length; axis++) {
    const dim: unknown = shape[axis];
    if (typeof dim !== "number" || !Number.isSafeInteger(dim) || dim < 0) {
      throw new KbError(
        "TENSOR_INVALID",
        `${what}: dimension ${axis} is ${String(dim)}; every dimension must be an integer >= 0.`,
      );
    }
    size *= dim;
  }
  const bytes = size * DTYPE_BYTES[dtype];
  if (!Number.isSafeInteger(size) || !Number.isSafeInteger(bytes)) {
    const exact = shape.reduce((product: bigint, dim: number) => product * BigInt(dim), 1n);
    throw new KbError(
      "TENSOR_INVALID",
      `${what}: ${exact} elements (${exact * BigInt(DTYPE_BYTES[dtype])} bytes) is beyond 2^53 - 1 bytes, more than any memory holds. Use a smaller shape.`,
    );
  }
  return bytes;
}

/**
 * The largest host tensor a bench may make: 1 GiB. Host tensors are real arrays in this process
 * (filled, copied to the device, kept for the reference), so a tensor of params such as
 * `--param M=1e9` would allocate terabytes; the largest shipped bench uses 64 MiB.
 */
export const HOST_TENSOR_MAX_BYTES = 2 ** 30;

/**
 * The bytes of a host tensor `call(shape, dtype)` would make, checked arithmetically before it
 * is made: `TENSOR_INVALID` for a bad shape or one above {@link HOST_TENSOR_MAX_BYTES}, naming
 * the bytes, the limit and `note()` (the params that made the shape, where it was asked for).
 */
export function hostTensorBytes(
  call: string,
  shape: readonly number[],
  dtype: Dtype,
  note: () => string,
): number {
  const bytes = tensorBytes(call, "host", shape, dtype);
  if (bytes > HOST_TENSOR_MAX_BYTES) {
    throw new KbError(
      "TENSOR_INVALID",
      `${call}(${formatShape(shape)}, ${dtype}): ${bytes} bytes; a host tensor may have at most ${HOST_TENSOR_MAX_BYTES} bytes (1 GiB)${note()}. Use smaller sizes.`,
    );
  }
  return bytes;
}

/**
 * `, from the params M=1000000000, K=1024`: the numeric params whose values are dimensions of
 * `shape` (the ones that made it), or an empty string.
 */
export function paramsOfShape(params: Readonly<Record<string, unknown>>, shape: readonly unknown[]): string {
  const named = Object.entries(params).filter(
    ([, value]) => typeof value === "number" && value > 1 && shape.includes(value),
  );
  return named.length === 0
    ? ""
    : `, from the params ${named.map(([key, value]) => `${key}=${value}`).join(", ")}`;
}

/** Throws `MEMORY_ACCESS` when `tensor` was freed: a host call cannot read or write it. */
export function refuseFreed(call: string, tensor: DeviceTensor, verb: string, instead: string): void {
  if (!tensor.freed) return;
  throw new KbError(
    "MEMORY_ACCESS",
    `${call}: device tensor ${tensor.describeOrigin()} was ${freedWhere(tensor)}; a freed tensor cannot be ${verb}. ${instead}, and free tensors only after their last use.`,
  );
}

/** Throws `MEMORY_ALLOCATION` when `tensor` was freed already (a double free), naming where. */
export function refuseDoubleFree(tensor: DeviceTensor): void {
  if (!tensor.freed) return;
  throw new KbError(
    "MEMORY_ALLOCATION",
    `free: device tensor ${tensor.describeOrigin()} was already ${freedWhere(tensor)} (double free). Free each tensor once, after its last use.`,
  );
}

/**
 * Throws `MEMORY_ACCESS` (with the kernel's name in its context) when a device tensor among a
 * launch's `args` was freed, naming the argument (see {@link findFreedArg}) and where it was freed.
 */
export function refuseFreedArgs(kernel: string, args: readonly unknown[]): void {
  const freedArg = findFreedArg(args);
  if (freedArg === null) return;
  throw new KbError(
    "MEMORY_ACCESS",
    `launch: ${freedArg.path} is device tensor ${freedArg.tensor.describeOrigin()}, which was ${freedWhere(freedArg.tensor)}. A kernel cannot use a freed tensor: free it after the last launch that uses it, or pass a live one.`,
    { context: { kernel } },
  );
}

/**
 * Frees `tensor`'s memory in `device`, recording `freedAt`. Throws `MEMORY_ALLOCATION` naming the
 * tensor and where it was allocated when its address is not a live allocation of `device` (a
 * tensor of another simulator, or one made by hand), with the allocator's reason.
 */
export function freeOrExplain(
  device: DeviceMemory,
  tensor: DeviceTensor,
  freedAt: string | null,
  options: FreeOptions,
): void {
  try {
    device.free(tensor.address, freedAt ?? undefined, options);
  } catch (error) {
    if (!(error instanceof KbError)) throw error;
    throw new KbError(
      error.code,
      `free: device tensor ${tensor.describeOrigin()} is not a live allocation of this simulator: free only tensors its sim.empty or sim.toDevice made, once each. The allocator says: ${error.detail}`,
      { context: error.context, cause: error },
    );
  }
}

/** `freed at bench.ts:12:3`, or `freed (where is unknown)`. */
function freedWhere(tensor: DeviceTensor): string {
  const at = tensor.freedAt;
  return at === null ? "freed (where is unknown)" : `freed at ${at}`;
}

/**
 * The first freed device tensor among a launch's args: the args themselves, and the items of an
 * array or the values of a plain object among them (one level deep; nothing else is searched).
 */
function findFreedArg(args: readonly unknown[]): { path: string; tensor: DeviceTensor } | null {
  if (!Array.isArray(args)) return null;
  for (let index = 0; index < args.length; index++) {
    const arg: unknown = args[index];
    if (arg instanceof DeviceTensor) {
      if (arg.freed) return { path: `args[${index}]`, tensor: arg };
    } else if (Array.isArray(arg)) {
      for (let item = 0; item < arg.length; item++) {
        const value: unknown = arg[item];
        if (value instanceof DeviceTensor && value.freed)
          return { path: `args[${index}][${item}]`, tensor: value };
      }
    } else if (isPlainObject(arg)) {
      for (const key of Object.keys(arg)) {
        const value = arg[key];
        if (value instanceof DeviceTensor && value.freed) {
          const path = /^[A-Za-z_$][\w$]*$/.test(key) ? `.${key}` : `[${JSON.stringify(key)}]`;
          return { path: `args[${index}]${path}`, tensor: value };
        }
      }
    }
  }
  return null;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== "object" || value === null) return false;
  const prototype: unknown = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}
