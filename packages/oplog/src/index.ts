export { OpLogJsonlParser, opRecordToJson, parseOpLogJsonl } from "./jsonl.js";
export type { OpLoggerOptions, OpLogSink } from "./logger.js";
export { MemorySink, OpLogger } from "./logger.js";
export type {
  Dtype,
  EpilogueStep,
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
  dtypeSchema,
  epilogueStepSchema,
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
