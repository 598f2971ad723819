// The independent host evaluator of the kernel language (packages/tl/README.md, "Semantics"):
// f64 host tensors and the tl operations on them, written from the README alone.

export { ATOMIC_OPS, type AtomicOp, atomic } from "./atomic.js";
export { BIT_OPS, type BitOp, bits } from "./bits.js";
export type { Agreement, Disagreement, Tolerance } from "./compare.js";
export { close, sameWithin, TOLERANCES } from "./compare.js";
export { compositeMath } from "./composite-math.js";
export type { Dtype } from "./dtype.js";
export {
  DTYPES,
  decodeBf16,
  decodeF16,
  encodeBf16,
  encodeF16,
  INTEGER_RANGES,
  isFloat,
  roundTo,
  wrap32,
} from "./dtype.js";
export type { BinaryOp, UnaryOp, UnaryOptions } from "./elementwise.js";
export {
  applyBinary,
  applyUnary,
  BINARY_OPS,
  binary,
  cast,
  clamp,
  fma,
  isBinaryOp,
  isUnaryOp,
  UNARY_OPS,
  unary,
  where,
} from "./elementwise.js";
export { gather } from "./gather.js";
export type { CompositeGemmOptions, DotOptions, EpilogueStep } from "./gemm.js";
export { accumulatorDtype, compositeGemm, dot } from "./gemm.js";
export { block, transpose, view } from "./layout.js";
export { isLibdeviceOp, LIBDEVICE_OPS, type LibdeviceOp, libdevice } from "./libdevice.js";
export { philox, random, uniform } from "./random.js";
export type { ReduceOp } from "./reduce.js";
export { REDUCE_OPS, reduce, softmax } from "./reduce.js";
export { dotScaled, type ScaledFormat } from "./scaled.js";
export { SCAN_OPS, type ScanOp, scan } from "./scan.js";
export { cat, join, permute, reshape, scatter, split } from "./shapes.js";
export type { RefTensor } from "./tensor.js";
export { arange, formatShape, full, indexOf, sizeOf, tensor, zeros } from "./tensor.js";
