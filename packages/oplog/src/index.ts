export { atomicResult } from "./atomic-ops.js";
export { OpLogJsonlParser, opRecordToJson, parseOpLogJsonl } from "./jsonl.js";
export type { OpLoggerOptions, OpLogSink } from "./logger.js";
export { MemorySink, OpLogger } from "./logger.js";
export type { MathOperand, MathScalars } from "./math-eval.js";
export { broadcastShapes, evaluateMath } from "./math-eval.js";
export type {
  ElementFn,
  ElementwiseMathOp,
  LineFn,
  LineMathOp,
  MathDtypeRule,
  MathOpInfo,
  MathOpName,
  MathShape,
  MathShapeRule,
  PublicMathOpName,
  SwapMathOp,
} from "./math-ops.js";
export { MATH_OPS, MATH_SHAPES, mathOutputShape, PUBLIC_MATH_OPS, SCALAR_OPS } from "./math-ops.js";
export type {
  AtomicOp,
  Dtype,
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
  atomicOpSchema,
  dtypeSchema,
  epilogueStepSchema,
  FLOAT_TEXTS,
  floatSchema,
  gemmOpRecordSchema,
  gemmParamsSchema,
  layoutSchema,
  mathOpRecordSchema,
  mathParamsSchema,
  memoryOpRecordSchema,
  memoryParamsSchema,
  memorySpaceSchema,
  opKindSchema,
  opRecordSchema,
  stripTimes,
} from "./schema.js";
