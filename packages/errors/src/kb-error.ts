import { formatSimTime } from "./format.js";

/**
 * Every error code kernbench-ts can raise. A closed union: a new failure mode gets a new code here,
 * so callers can switch on `error.code` exhaustively.
 */
export type KbErrorCode =
  /** A delay that is negative, NaN, infinite or not a number. */
  | "DES_INVALID_DELAY"
  /** A process yielded something that is not an event of its environment. */
  | "DES_INVALID_YIELD"
  /** `env.process()` was given something that is not a generator. */
  | "DES_NOT_A_GENERATOR"
  /** `succeed`/`fail` on an event that has already been triggered. */
  | "DES_ALREADY_TRIGGERED"
  /** An event of one environment used in another. */
  | "DES_FOREIGN_EVENT"
  /** `run(until)` with a time that is not after `now`, or a bad argument to an engine call. */
  | "DES_INVALID_ARGUMENT"
  /** Interrupting a process that has finished, or a process interrupting itself. */
  | "DES_INVALID_INTERRUPT"
  /** A put into a store that was closed, or a get from a closed and drained store. */
  | "DES_STORE_CLOSED"
  /** A request released on a resource it does not belong to. */
  | "DES_WRONG_RESOURCE"
  /** A resource request released a second time. */
  | "DES_RELEASED_TWICE"
  /** The schedule ran empty while processes still waited: nothing can ever wake them. */
  | "DES_DEADLOCK"
  /** A topology file that cannot be read. */
  | "TOPOLOGY_NOT_FOUND"
  /** A YAML file (a topology) that is not valid YAML. */
  | "TOPOLOGY_YAML_SYNTAX"
  /** A YAML file that does not match its schema (unknown or missing keys, wrong values). */
  | "TOPOLOGY_INVALID"
  /** A node id that is not in the topology graph. */
  | "TOPOLOGY_UNKNOWN_NODE"
  /** No path connects two nodes of the topology graph. */
  | "TOPOLOGY_NO_ROUTE"
  /** An address outside the documented device address layout or outside a memory. */
  | "TOPOLOGY_BAD_ADDRESS"
  /** A command-line usage error (unknown option, missing argument). */
  | "CLI_USAGE"
  /** A component `impl` that no registry (built-in or plug-in) provides for its kind. */
  | "COMPONENT_UNKNOWN_IMPL"
  /** A component's params rejected by its implementation's schema. */
  | "COMPONENT_INVALID_PARAMS"
  /** A bad component definition or registration (duplicate impl, wrong kind, bad plug-in shape). */
  | "COMPONENT_INVALID_DEFINITION"
  /** A plug-in package that cannot be found or imported. */
  | "COMPONENT_PLUGIN_NOT_FOUND"
  /** A command or request the simulated machine cannot carry out (bad PE, bad address, bad shape). */
  | "MACHINE_INVALID_COMMAND"
  /** A broken contract inside the simulated machine (a tile completed twice, a message with no route). */
  | "MACHINE_INVARIANT"
  /** A device memory allocation that cannot be served (no free block large enough, a bad size, a bad free). */
  | "MEMORY_ALLOCATION"
  /** A memory access outside a live allocation, misaligned for its element size, or outside the address range. */
  | "MEMORY_ACCESS"
  /** An op-log record or JSONL line that does not match the OpRecord schema. */
  | "OPLOG_INVALID"
  /** An op-log used wrongly (ending an op twice, writing after close). */
  | "OPLOG_MISUSE"
  /** A host tensor built or used wrongly (a bad shape or dtype, bytes of the wrong length, an index out of range). */
  | "TENSOR_INVALID"
  /** A tl call with bad arguments (mismatched shapes, an unknown epilogue op, a handle of another kernel). */
  | "TL_INVALID_CALL"
  /** Reading the data of a compute handle in phase 1 (results exist only in phase 2). */
  | "TL_PENDING_HANDLE"
  /** A kernel's compute outputs overflowed its PE's TCM scratch region. */
  | "TL_SCRATCH_OVERFLOW"
  /** A kernel that threw, misused the runner (two commands in flight, awaiting something that is not tl), or is not registered. */
  | "KERNEL_FAILED"
  /** A bench definition, bench parameter or simulator call that is wrong (unknown bench, bad --param, bad grid). */
  | "RUNTIME_INVALID"
  /** An output file that cannot be written (a full disk, no permission): a trace, an op log, a results cache entry. */
  | "OUTPUT_UNWRITABLE"
  /** A run stopped by one of its limits (DES events, simulated time, wall time): a kernel that never ends, or a limit set too low. */
  | "RUN_LIMIT"
  /** A sweep spec that is wrong (unknown axis path, bad design, a constraint that does not parse), or a sweep's output that cannot be resumed. */
  | "SWEEP_INVALID"
  /** A sweep's results folder that cannot be written (a full disk, no permission) or that another kb sweep is writing (its lock file). */
  | "SWEEP_OUTPUT"
  /** A sweep's job queue that cannot be used: a bad Redis URL, a Redis server that does not answer, a queue command that failed. */
  | "SWEEP_QUEUE";

/**
 * Where an error happened. Every field is optional; a message names all that are known so a user
 * can find the place without a debugger.
 */
export interface KbErrorContext {
  /** Source file (a topology YAML, a kernel file). */
  readonly file?: string;
  /** 1-based line in `file`. */
  readonly line?: number;
  /** 1-based column in `file`. */
  readonly col?: number;
  /** Topology node id, such as `sip0.cube1.pe3.pe_gemm`. */
  readonly nodeId?: string;
  /** Kernel name. */
  readonly kernel?: string;
  /** PE id the kernel ran on. */
  readonly pe?: string;
  /** Name of the simulation process that was running. */
  readonly process?: string;
  /** Simulated time in ns when the error was raised. */
  readonly simTimeNs?: number;
  /**
   * The path of the offending value in a spec (a topology, a sweep, a config): keys and array
   * indices from its root, such as `["overrides", 1, "match"]`. Not printed (the detail says it in
   * the file's words, `overrides[1].match: ...`): a tool reads it to point at the place in the file.
   */
  readonly path?: readonly (string | number)[];
}

/** Options of the {@link KbError} constructor. */
export interface KbErrorOptions {
  readonly context?: KbErrorContext;
  readonly cause?: unknown;
}

/**
 * The one error class of kernbench-ts.
 *
 * The message reads `[CODE] where: what was expected, what was found. What to do.`, where `where`
 * is built from the {@link KbErrorContext} (`file:line:col`, node, kernel, PE, process, simulated
 * time). The unprefixed text is kept in `detail` and the context in `context` (with, for an error
 * in a spec, the offending value's `path`), for tools that format errors themselves.
 *
 * **When to use**: every error a user can cause by bad input or a bad model. Internal invariant
 * failures may stay plain `Error`s.
 */
export class KbError extends Error {
  override readonly name: string = "KbError";
  /** Machine-readable code; see {@link KbErrorCode}. */
  readonly code: KbErrorCode;
  /** Where it happened. */
  readonly context: KbErrorContext;
  /** The message without the code and location prefix. */
  readonly detail: string;

  /** The path of the offending value in a spec, when known: `context.path`. */
  get path(): readonly (string | number)[] | undefined {
    return this.context.path;
  }

  constructor(code: KbErrorCode, detail: string, options: KbErrorOptions = {}) {
    const context = options.context ?? {};
    const where = formatContext(context);
    super(
      `[${code}] ${where ? `${where}: ` : ""}${detail}`,
      options.cause === undefined ? {} : { cause: options.cause },
    );
    this.code = code;
    this.context = context;
    this.detail = detail;
  }
}

/**
 * Formats a context as a short location: `file:line:col node ... kernel ... pe ... process "p" at t=12 ns`.
 * Returns an empty string for an empty context.
 */
export function formatContext(context: KbErrorContext): string {
  const parts: string[] = [];
  if (context.file !== undefined) {
    let location = context.file;
    if (context.line !== undefined) {
      location += `:${context.line}`;
      if (context.col !== undefined) location += `:${context.col}`;
    }
    parts.push(location);
  }
  if (context.nodeId !== undefined) parts.push(`node ${context.nodeId}`);
  if (context.kernel !== undefined) parts.push(`kernel ${context.kernel}`);
  if (context.pe !== undefined) parts.push(`on ${context.pe}`);
  if (context.process !== undefined) parts.push(`process "${context.process}"`);
  if (context.simTimeNs !== undefined) parts.push(`at t=${formatSimTime(context.simTimeNs)} ns`);
  return parts.join(" ");
}

/** True when `value` is a {@link KbError}, optionally with the given code. */
export function isKbError(value: unknown, code?: KbErrorCode): value is KbError {
  return value instanceof KbError && (code === undefined || value.code === code);
}
