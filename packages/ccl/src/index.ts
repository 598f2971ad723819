export { chainBroadcast } from "./algorithms/chain-broadcast.js";
export { ringAllGather } from "./algorithms/ring-all-gather.js";
export { ringAllReduce } from "./algorithms/ring-all-reduce.js";
export type { BarrierArgs } from "./algorithms/ring-barrier.js";
export { ringBarrier } from "./algorithms/ring-barrier.js";
export { ringReduceScatter } from "./algorithms/ring-reduce-scatter.js";
export { RingStream, roundsFor } from "./algorithms/ring-stream.js";
export { TREE_MIN_CHUNK_BYTES, treeAllReduce } from "./algorithms/tree-all-reduce.js";
export type { CclConfig, CclConfigInput, CclConfigOptions, CclRule, WorldSizeSource } from "./config.js";
export {
  cclConfig,
  cclConfigSchema,
  cclConfigToYaml,
  DEFAULT_CCL_CONFIG,
  parseCclConfig,
  resolveWorldSize,
  selectAlgorithm,
} from "./config.js";
export { ringAllReduceModelNs } from "./cost-model.js";
export type { RingMeasurement, RingMeasureOptions } from "./fidelity.js";
export { measureRingAllReduce } from "./fidelity.js";
export type {
  AllGatherArgs,
  AllReduceArgs,
  BroadcastArgs,
  CollectiveArgs,
  CollectiveDtype,
  ReduceOp,
  ReduceScatterArgs,
  Region,
  Span,
} from "./kernel-support.js";
export {
  bufferOf,
  COLLECTIVE_DTYPES,
  chunkCount,
  combine,
  elementAddress,
  kernelError,
  REDUCE_OPS,
  recvToScratch,
  slotElements,
  split,
} from "./kernel-support.js";
export type {
  Backend,
  CollectiveResult,
  ProcessGroupOptions,
  RankTensors,
} from "./process-group.js";
export { BACKENDS, DEFAULT_SLOT_BYTES, initProcessGroup, ProcessGroup } from "./process-group.js";
export type { IpcqCommand, PeCommand } from "./queue-check.js";
export { commandsOfRanks, ipcqCommands, rankPlacement, runQueues } from "./queue-check.js";
export type { Direction, LaneRing, RankGroup, RankScope, RankShape } from "./ranks.js";
export {
  cubeRing,
  DIRECTIONS,
  laneOf,
  laneRing,
  mod,
  oppositeDirection,
  peRing,
  rankOf,
  rankRing,
  ringPerCube,
  sipRing,
} from "./ranks.js";
export type {
  AnyCollectiveAlgorithm,
  CollectiveAlgorithm,
  CollectiveArgsByKind,
  CollectiveKind,
} from "./registry.js";
export { AlgorithmRegistry, BUILTIN_ALGORITHMS, COLLECTIVES, defaultAlgorithms } from "./registry.js";
