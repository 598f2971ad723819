// @kb/spec: the vocabulary every part of kernbench-ts shares (the element types, the PE commands,
// the math op table, the HBM geometry a controller receives), depending on zod and @kb/errors
// only, so a kernel library, a timing model and a tool agree on it without depending on the
// machine.
export type { AtomicOp } from "./atomic-ops.js";
export { atomicOpSchema, atomicResult, atomicResultExact } from "./atomic-ops.js";
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
export { MX_SCALE_BLOCK, NV_SCALE_BLOCK, scaleBlockOf } from "./commands.js";
// The timing-model contracts: a plug-in's models are plain definitions the framework adapts.
export type { EnergyCost, EnergyNode, EnergyTable, EnergyUnit } from "./contracts/energy.js";
export {
  checkEnergyTable,
  ENERGY_MEASURES,
  ENERGY_UNITS,
  energyPj,
  energyUnitOf,
  processScale,
} from "./contracts/energy.js";
export type {
  ForwardingKind,
  ForwardingModel,
  ForwardingModelContext,
  ForwardingModelDefinition,
  ForwardingModelSpec,
  HopPacket,
  HopPart,
} from "./contracts/forwarding-model.js";
export {
  checkForwardingModel,
  defineForwardingModel,
  FORWARDING_KINDS,
  forwardingTopologyParams,
} from "./contracts/forwarding-model.js";
export type {
  MemoryModel,
  MemoryModelContext,
  MemoryModelDefinition,
  MemoryModelKind,
  MemoryModelSpec,
  MemoryRequest,
  MemoryTiming,
} from "./contracts/memory-model.js";
export { checkMemoryModel, defineMemoryModel } from "./contracts/memory-model.js";
export type {
  ComponentPeak,
  ContractStamp,
  ModelDefinitionBase,
  SimEnvironment,
  SimEvent,
  SpecVersion,
} from "./contracts/model-definition.js";
export { checkDefinitionBase, SPEC_VERSION } from "./contracts/model-definition.js";
export type { ModelStat, ModelStatInfo } from "./contracts/model-stats.js";
export type {
  FrameworkComponentDefinition,
  KbPlugin,
  PluginCodeSource,
  PluginComponent,
  PluginMeta,
  TimingModelSpec,
} from "./contracts/plugin.js";
export { checkPlugin, definePlugin } from "./contracts/plugin.js";
export type {
  GemmStage,
  MathStage,
  StageCounters,
  StageEngineArray,
  StageEngineContext,
  StageEngineDefinition,
  StageEngineKind,
  StageEngineSpec,
  StageSteps,
  StageTiming,
  StageType,
  TileWork,
  TileWorkOf,
} from "./contracts/stage-engine.js";
export {
  checkStageEngine,
  defineStageEngine,
  gemmWork,
  mathWork,
  STAGE_ENGINE_STAGES,
} from "./contracts/stage-engine.js";
export type { IndexedRun } from "./dma-indexed.js";
export { indexedRuns, indexedRunsProblem } from "./dma-indexed.js";
export type { MaskPiece } from "./dma-mask.js";
export { maskPieces, maskRunsProblem } from "./dma-mask.js";
export type { Dtype, NarrowFloatDtype } from "./dtype.js";
export { DTYPE_BYTES, DTYPES, dtypeSchema, isDtype, isFloatDtype, isNarrowFloatDtype } from "./dtype.js";
export type { ExactOperand, ExactValues, MathScalar } from "./exact-math.js";
export { bigintToOddDouble, evaluateExactMath, mathScalar, needsExactMath } from "./exact-math.js";
export type { HbmAddressMap, HbmCoordinates, HbmOrganisation } from "./hbm-address-map.js";
export { hbmCoordinatesScratch } from "./hbm-address-map.js";
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
// Counter-based random words (Philox 4x32-10): the math ops' rand and the fabric's synthetic traffic.
export { philox4x32, philoxKey } from "./philox.js";
