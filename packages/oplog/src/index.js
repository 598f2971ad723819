export { atomicResult } from "./atomic-ops.js";
export { OpLogJsonlParser, opRecordToJson, parseOpLogJsonl } from "./jsonl.js";
export { MemorySink, OpLogger } from "./logger.js";
export { broadcastShapes, evaluateMath } from "./math-eval.js";
export { MATH_OPS, MATH_SHAPES, mathOutputShape, PUBLIC_MATH_OPS, SCALAR_OPS } from "./math-ops.js";
export { atomicOpSchema, dtypeSchema, epilogueStepSchema, FLOAT_TEXTS, floatSchema, gemmOpRecordSchema, gemmParamsSchema, layoutSchema, mathOpRecordSchema, mathParamsSchema, memoryOpRecordSchema, memoryParamsSchema, memorySpaceSchema, opKindSchema, opRecordSchema, stripTimes, } from "./schema.js";
//# sourceMappingURL=index.js.map