export { bf16BitsToF32, f16BitsToF32, f32ToBf16Bits, f32ToF16Bits, roundToDtype } from "./convert.js";
export type { Dtype } from "./dtype.js";
export { DTYPE_BYTES, DTYPES, isDtype, isFloatDtype } from "./dtype.js";
export { formatShape, shapeSize } from "./shape.js";
export type { TensorRandomOptions } from "./tensor.js";
export { Tensor } from "./tensor.js";
