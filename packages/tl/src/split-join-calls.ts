import { formatShape } from "@kb/tensor";
import type { CallScope } from "./call-scope.js";
import { runMath } from "./compute.js";
import type { TLContext } from "./context.js";
import type { TensorHandle } from "./handles.js";
import type { MathOptions } from "./options.js";
import { aliasOf, permutation, swapKeepsBytes, swapped } from "./shapes.js";
import { checkOwned } from "./validate.js";

// Triton's shape calls that move elements: `tl.split`, `tl.join`, `tl.permute`, `tl.cat`, made of
// the PE_MATH data movement ops phase 2 already replays (`copy` into a part of a buffer,
// `transpose` of two axes), so timing, the op log and --check-phases follow from those ops
// (docs/latency-model.md, "Split, join, permute, cat").

/** Triton's shape calls that move elements (installed on `TLContext` by context.ts). */
export interface SplitJoinCalls {
  /**
   * Triton's `tl.permute(x, dims)`: `out[i_dims[0], ..., i_dims[r-1]] = x[i_0, ..., i_{r-1}]`, the
   * result's dimension `k` is `x`'s dimension `dims[k]`. No command when no byte moves (only
   * dimensions of 1 change places), else one PE_MATH `transpose` per exchange of two axes.
   */
  permute(x: TensorHandle, dims: readonly number[], options?: MathOptions): Promise<TensorHandle>;
  /**
   * Triton's `tl.join(a, b)`: `a` and `b` (one shape `S`, one dtype) stacked along a new last
   * dimension of 2, shape `[...S, 2]` (`out[..., 0] = a`, `out[..., 1] = b`): two PE_MATH `copy`
   * ops and one `transpose`.
   */
  join(a: TensorHandle, b: TensorHandle, options?: MathOptions): Promise<TensorHandle>;
  /**
   * Triton's `tl.split(x)`: `x` `[...S, 2]` into `[x[..., 0], x[..., 1]]`, each `S`: one PE_MATH
   * `transpose`; the two halves are views of its result.
   */
  split(x: TensorHandle): Promise<[TensorHandle, TensorHandle]>;
  /**
   * Triton's `tl.cat(a, b, can_reorder)`: `a` `[n, ...R]` and `b` `[m, ...R]` concatenated along
   * the first dimension, `[n + m, ...R]`, in order (`a`'s elements, then `b`'s): two PE_MATH
   * `copy` ops. `canReorder` is accepted for Triton's signature; the order is always kept.
   */
  cat(a: TensorHandle, b: TensorHandle, canReorder?: boolean, options?: MathOptions): Promise<TensorHandle>;
}

/** `x` permuted by `dims` as a sequence of exchanges of two axes (PE_MATH `transpose` each). */
async function permuteBody(
  scope: CallScope,
  call: string,
  x: TensorHandle,
  dims: readonly number[],
  out: TensorHandle | undefined,
): Promise<TensorHandle> {
  // order[k]: the dimension of x now at position k.
  const order = x.shape.map((_, k) => k);
  const swaps: [number, number][] = [];
  for (let k = 0; k < dims.length; k++) {
    const j = order.indexOf(dims[k] as number);
    if (j === k) continue;
    swaps.push([k, j]);
    [order[k], order[j]] = [order[j] as number, order[k] as number];
  }
  const target = dims.map((d) => x.shape[d] as number);
  let shape = [...x.shape];
  const moving = swaps.filter(([a, b]) => {
    const keeps = swapKeepsBytes(shape, a, b);
    shape = swapped(shape, a, b);
    return !keeps;
  });
  if (moving.length === 0 && out === undefined) return aliasOf(scope, call, x, target);
  let current = x;
  shape = [...x.shape];
  for (const [i, [a, b]] of swaps.entries()) {
    const last = i === swaps.length - 1;
    if (swapKeepsBytes(shape, a, b) && !(last && out !== undefined)) {
      shape = swapped(shape, a, b);
      current = aliasOf(scope, call, current, shape);
      continue;
    }
    shape = swapped(shape, a, b);
    current = await runMath(scope, "transpose", [current], [b], { axis: a, out: last ? out : undefined });
  }
  if (swaps.length === 0) current = await runMath(scope, "copy", [x], [], { out });
  return current;
}

function checkPair(tl: TLContext, call: string, a: TensorHandle, b: TensorHandle, same: boolean): void {
  checkOwned(tl, call, a);
  checkOwned(tl, call, b);
  const rest = (h: TensorHandle) => formatShape(same ? h.shape : h.shape.slice(1));
  if (a.dtype !== b.dtype || rest(a) !== rest(b) || (!same && a.shape.length === 0)) {
    throw tl._error(
      "TL_INVALID_CALL",
      `tl.${call}: a and b must have one dtype and ${same ? "one shape" : "the same dimensions after the first"}; got ${a.describe()} and ${b.describe()}.`,
    );
  }
}

/** `a` then `b` in one new buffer of `shape` (their elements in row-major order): two PE_MATH copies. */
async function stacked(
  scope: CallScope,
  tl: TLContext,
  call: string,
  a: TensorHandle,
  b: TensorHandle,
  shape: readonly number[],
  out: TensorHandle | undefined,
): Promise<TensorHandle> {
  const buffer = out ?? scope.scratchHandle(call, "compute", shape, a.dtype);
  if (out !== undefined && (formatShape(out.shape) !== formatShape(shape) || out.dtype !== a.dtype)) {
    throw tl._error(
      "TL_INVALID_CALL",
      `tl.${call}: out must be ${a.dtype} ${formatShape(shape)}; got ${out.describe()}.`,
    );
  }
  await runMath(scope, "copy", [a], [], { out: tl.view(buffer, 0, a.shape) });
  await runMath(scope, "copy", [b], [], { out: tl.view(buffer, a.size, b.shape) });
  return buffer;
}

export const splitJoinCalls: SplitJoinCalls & ThisType<TLContext> = {
  permute(x, dims, options = {}) {
    return this._call("permute", async () => {
      checkOwned(this, "permute", x);
      return permuteBody(this._scope, "permute", x, permutation(this, "permute", x, dims), options.out);
    });
  },

  join(a, b, options = {}) {
    return this._call("join", async () => {
      checkPair(this, "join", a, b, true);
      const both = await stacked(this._scope, this, "join", a, b, [2, a.size], undefined);
      const shape = [...a.shape, 2];
      const joined = await runMath(this._scope, "transpose", [both], [1], {
        axis: 0,
        out: options.out === undefined ? undefined : aliasOf(this._scope, "join", options.out, [a.size, 2]),
      });
      return aliasOf(this._scope, "join", joined, shape);
    });
  },

  split(x) {
    return this._call("split", async () => {
      checkOwned(this, "split", x);
      const last = x.shape[x.shape.length - 1];
      if (last !== 2) {
        throw this._error(
          "TL_INVALID_CALL",
          `tl.split(${x.describe()}): the last dimension must be 2 (Triton's split); reshape first, e.g. tl.reshape(x, [..., 2]).`,
        );
      }
      const half = x.size / 2;
      const shape = x.shape.length === 1 ? [1] : x.shape.slice(0, -1);
      const flat = aliasOf(this._scope, "split", x, [half, 2]);
      const apart = await runMath(this._scope, "transpose", [flat], [1], { axis: 0 });
      return [this.view(apart, 0, shape), this.view(apart, half, shape)];
    });
  },

  cat(a, b, _canReorder = true, options = {}) {
    return this._call("cat", async () => {
      checkPair(this, "cat", a, b, false);
      const shape = [(a.shape[0] as number) + (b.shape[0] as number), ...a.shape.slice(1)];
      return stacked(this._scope, this, "cat", a, b, shape, options.out);
    });
  },
};
