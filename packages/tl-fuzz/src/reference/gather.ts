import { invalid } from "./dtype.js";
import { type RefTensor, tensor } from "./tensor.js";

// Gathers and scatters (packages/tl/README.md, "Memory, constants and views": `load` and `store`
// with `offsets`), over a device tensor held as a RefTensor (its elements in row-major order).

/**
 * `tl.load(base, offsets.shape, dtype, { offsets, mask, other })` where `base` is element 0 of
 * `memory`: element `i` is `memory`'s element `offsets[i]` where `mask[i]` is 1 (every `i` without
 * a mask), `round_dtype(other)` where it is 0. `offsets` and `mask` have the result's shape.
 */
export function gather(
  memory: RefTensor,
  offsets: RefTensor,
  mask: RefTensor | null = null,
  other = 0,
): RefTensor {
  const size = memory.data.length;
  const out = new Float64Array(offsets.data.length);
  offsets.data.forEach((offset, i) => {
    if (mask !== null && mask.data[i] === 0) {
      out[i] = other;
      return;
    }
    if (!Number.isInteger(offset) || offset < 0 || offset >= size)
      throw invalid("gather", `offset ${offset} of element ${i} is outside the ${size} elements.`);
    out[i] = memory.data[offset] as number;
  });
  return tensor(out, offsets.shape, memory.dtype); // other rounded to the dtype
}
