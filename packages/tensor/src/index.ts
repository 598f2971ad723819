// The dtypes are defined once in @kb/spec (kernels, PE commands and the op log name the same
// ones); re-exported here, where they were first published.
export type { Dtype, NarrowFloatDtype } from "@kb/spec";
export { DTYPE_BYTES, DTYPES, isDtype, isFloatDtype, isNarrowFloatDtype } from "@kb/spec";
export { bf16BitsToF32, f16BitsToF32, f32ToBf16Bits, f32ToF16Bits, roundToDtype } from "./convert.js";
export { type Elements, elementView } from "./elements.js";
export { computeMath, tensorFromBigInts, toBigInts } from "./exact.js";
export { decodeNarrowFloat, encodeNarrowFloat, narrowFloatMax } from "./narrow-float.js";
export { Xoshiro128StarStar } from "./random.js";
export { formatShape, shapeSize } from "./shape.js";
export type { TensorRandomOptions } from "./tensor.js";
export { Tensor } from "./tensor.js";
