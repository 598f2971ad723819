export { chainBroadcast } from "./algorithms/chain-broadcast.js";
export { chainGather, chainReduce, chainScatter } from "./algorithms/chain-rooted.js";
export type { P2PArgs, Transfer } from "./algorithms/p2p.js";
export { p2pTransfers, routeOf } from "./algorithms/p2p.js";
export { ringAllGather } from "./algorithms/ring-all-gather.js";
export { ringAllReduce } from "./algorithms/ring-all-reduce.js";
export { ringAllToAll } from "./algorithms/ring-all-to-all.js";
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
export type { PeTerm } from "./cost-model.js";
export {
  chainModelNs,
  gatherModelNs,
  p2pModelNs,
  ringAllReduceModelNs,
  ringAllToAllModelNs,
  scatterModelNs,
} from "./cost-model.js";
export type { RingMeasurement, RingMeasureOptions } from "./fidelity.js";
export { measureRingAllReduce, peTermOf, ringHops } from "./fidelity.js";
export type {
  CollectiveMeasurement,
  CollectiveMeasureOptions,
  MeasuredCollective,
} from "./fidelity-collectives.js";
export { MEASURED_COLLECTIVES, measureCollective } from "./fidelity-collectives.js";
export type {
  AllGatherArgs,
  AllReduceArgs,
  AllToAllArgs,
  BroadcastArgs,
  CollectiveArgs,
  CollectiveDtype,
  GatherArgs,
  ReduceArgs,
  ReduceOp,
  ReduceScatterArgs,
  Region,
  ScatterArgs,
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
export type { P2POp, P2POpKind, P2PResult, Work } from "./p2p.js";
export type { PeParams, PieceWork } from "./pe-term.js";
export { NO_PE_WORK, peParamsOf, pieceWork, tcmAccessNs } from "./pe-term.js";
export type { Backend, CollectiveResult, ProcessGroupOptions } from "./process-group.js";
export { BACKENDS, DEFAULT_SLOT_BYTES, initProcessGroup, ProcessGroup } from "./process-group.js";
export type { IpcqCommand, PeCommand } from "./queue-check.js";
export { commandsOfRanks, ipcqCommands, rankPlacement, runQueues } from "./queue-check.js";
export type { AllToAllBlocks, RankTensors } from "./rank-tensors.js";
export { listBlocks, rankRegions, singleBlocks } from "./rank-tensors.js";
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
