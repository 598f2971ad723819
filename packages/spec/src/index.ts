// @kb/spec: the vocabulary every part of kernbench-ts shares (the element types, the PE commands,
// the math op table, the HBM geometry a controller receives), depending on zod and @kb/errors
// only, so a kernel library, a timing model and a tool agree on it without depending on the
// machine.
export type { AtomicOp } from "./atomic-ops.js";
export { atomicOpSchema, atomicResult } from "./atomic-ops.js";
export type {
  CompositeGemmCommand,
  CompositeMathCommand,
  CyclesCommand,
  DelayCommand,
  DmaAtomic,
  DmaCommand,
  DmaIndexed,
  DmaMask,
  EpilogueOp,
  GemmCommand,
  IpcqRecvCommand,
  IpcqSendCommand,
  MathCommand,
  PeCommand,
  WaitCommand,
} from "./commands.js";
export { MX_SCALE_BLOCK } from "./commands.js";
export type { IndexedRun } from "./dma-indexed.js";
export { indexedRuns, indexedRunsProblem } from "./dma-indexed.js";
export type { MaskPiece } from "./dma-mask.js";
export { maskPieces, maskRunsProblem } from "./dma-mask.js";
export type { Dtype, NarrowFloatDtype } from "./dtype.js";
export { DTYPE_BYTES, DTYPES, dtypeSchema, isDtype, isFloatDtype, isNarrowFloatDtype } from "./dtype.js";
export type { HbmNodeKey } from "./hbm-topology-params.js";
export {
  HBM_GEOMETRY_KEYS,
  HBM_NODE_KEYS,
  HBM_TIMING_KEYS,
  hbmPresetNameSchema,
  hbmTopologyParams,
  queueDepthParam,
} from "./hbm-topology-params.js";
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
