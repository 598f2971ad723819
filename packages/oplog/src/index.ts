// The vocabulary the op log names (dtypes, atomics, the math op table with its scalar
// evaluation) is defined in @kb/spec; re-exported here, where it was first published.
export type {
  AtomicOp,
  Dtype,
  ElementFn,
  ElementwiseMathOp,
  LineFn,
  LineMathOp,
  MathDtypeRule,
  MathOperand,
  MathOpInfo,
  MathOpName,
  MathScalar,
  MathScalars,
  MathShape,
  MathShapeRule,
  PublicMathOpName,
  SwapMathOp,
} from "@kb/spec";
export {
  atomicOpSchema,
  atomicResult,
  broadcastShapes,
  dtypeSchema,
  evaluateMath,
  MATH_OPS,
  MATH_SHAPES,
  MX_SCALE_BLOCK,
  mathOutputShape,
  PUBLIC_MATH_OPS,
  SCALAR_OPS,
} from "@kb/spec";
export { OpLogJsonlParser, opRecordToJson, parseOpLogJsonl } from "./jsonl.js";
export type { OpLoggerOptions, OpLogSink } from "./logger.js";
export { MemorySink, OpLogger } from "./logger.js";
export type {
  EpilogueStep,
  FloatText,
  GemmOpRecord,
  GemmParams,
  Layout,
  MathOpRecord,
  MathParams,
  MemoryOpRecord,
  MemoryParams,
  MemorySpace,
  OpKind,
  OpParamsByKind,
  OpRecord,
  TimelessOpRecord,
} from "./schema.js";
export {
  epilogueStepSchema,
  FLOAT_TEXTS,
  floatSchema,
  gemmOpRecordSchema,
  gemmParamsSchema,
  layoutSchema,
  mathOpRecordSchema,
  mathParamsSchema,
  mathScalarSchema,
  memoryOpRecordSchema,
  memoryParamsSchema,
  memorySpaceSchema,
  opKindSchema,
  opRecordSchema,
  stripTimes,
} from "./schema.js";
