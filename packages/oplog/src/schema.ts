import { type AtomicOp, atomicOpSchema, type Dtype, dtypeSchema } from "@kb/spec";
import * as z from "zod";

/*
 * The OpRecord interchange format of ADR-0020 D5. Field names are snake_case as in the ADR because
 * the JSONL file is read by a phase-2 data executor that may not be written in TypeScript. Every
 * object is strict (an unknown key is an error), so a typo in a producer is caught by the reader.
 * Times are simulated nanoseconds; addresses and sizes are bytes.
 */

/** A memory an address lives in: HBM, a PE's TCM, or the cube SRAM. */
export const memorySpaceSchema = z.enum(["hbm", "tcm", "sram"]);

/** Element order of a 2-D tensor in memory. */
export const layoutSchema = z.enum(["row_major", "col_major"]);

/** The executor-dispatch level of the op classification (ADR-0020 D5). */
export const opKindSchema = z.enum(["memory", "gemm", "math"]);

/**
 * How the JSONL file spells the float values JSON has no number for: NaN and the infinities (which
 * `JSON.stringify` would write as `null`) and -0 (which it would write as `0`; the sign matters for
 * bit-exact replay: a later `1 / x` gives -Infinity, not Infinity). Each string is the number's
 * usual decimal text, which the standard float parser of most languages reads back (`Number`,
 * Python's `float`, Go's `strconv.ParseFloat`, Rust's `str::parse::<f64>`).
 */
export const FLOAT_TEXTS = ["NaN", "Infinity", "-Infinity", "-0"] as const;

/** One of {@link FLOAT_TEXTS}. */
export type FloatText = (typeof FLOAT_TEXTS)[number];

const FLOAT_VALUES: ReadonlyMap<unknown, number> = new Map<unknown, number>([
  ["NaN", Number.NaN],
  ["Infinity", Number.POSITIVE_INFINITY],
  ["-Infinity", Number.NEGATIVE_INFINITY],
  ["-0", -0],
]);

const FLOAT_EXPECTED = `expected a number or one of the strings ${FLOAT_TEXTS.map((text) => `"${text}"`).join(", ")}`;
const FLOAT_HINT =
  'write NaN as "NaN", Infinity as "Infinity", -Infinity as "-Infinity" and -0 as "-0" (JSON has no number for NaN and the infinities: JSON.stringify writes null)';

/** A found value for an issue message: `null`, `"text"`, `an array`, `true`, ... */
function describeFound(value: unknown): string {
  if (value === null) return "null";
  if (typeof value === "string") return JSON.stringify(value);
  if (Array.isArray(value)) return "an array";
  if (typeof value === "object") return "an object";
  return String(value);
}

/**
 * A float field of the format (math `scalars`, the numeric arguments of gemm `epilogue` steps):
 * any number, including NaN, the infinities and -0 (an in-memory record), or one of
 * {@link FLOAT_TEXTS} (how a JSONL line spells those), decoded to the number. Anything else, such
 * as the `null` that `JSON.stringify` leaves for NaN, is an issue saying what to write instead.
 */
export const floatSchema = z
  .unknown()
  .transform((value, context): number => {
    if (typeof value === "number") return value;
    const decoded = FLOAT_VALUES.get(value);
    if (decoded !== undefined) return decoded;
    context.issues.push({
      code: "custom",
      input: value,
      message: `${FLOAT_EXPECTED}, got ${describeFound(value)}; ${FLOAT_HINT}`,
    });
    return z.NEVER;
  })
  .describe(
    'A float: a JSON number, or the string "NaN", "Infinity", "-Infinity" or "-0" for the values JSON has no number for (NaN, the infinities) or loses the sign of (-0).',
  );

/** Decimal integer text past ±2^53, how a JSONL line spells a BigInt math scalar. */
const BIG_INTEGER_TEXT = /^-?[1-9][0-9]{15,19}$/;

/**
 * A math scalar: a float as {@link floatSchema} reads it, or an exact integer past ±2^53 (an
 * `i64` / `u64` constant such as 2^60 + 3, which a double would round): a BigInt in an in-memory
 * record, its decimal digits in a string in a JSONL line (`"1152921504606846979"`).
 */
export const mathScalarSchema = z
  .unknown()
  .transform((value, context): number | bigint => {
    if (typeof value === "bigint") return value;
    if (typeof value === "string" && BIG_INTEGER_TEXT.test(value)) {
      const big = BigInt(value);
      if (big > 2n ** 53n || big < -(2n ** 53n)) return big;
    }
    const parsed = floatSchema.safeParse(value);
    if (parsed.success) return parsed.data;
    for (const issue of parsed.error.issues)
      context.issues.push({ code: "custom", input: value, message: issue.message });
    return z.NEVER;
  })
  .describe(
    'A math scalar: a float (a JSON number, or "NaN", "Infinity", "-Infinity", "-0"), or an integer past ±2^53 as a string of its decimal digits (an exact i64 / u64 constant).',
  );

/** A step argument other than `op`: the four strings of {@link FLOAT_TEXTS} decode to numbers. */
const epilogueArgument = z.unknown().transform((value) => {
  if (typeof value !== "string") return value;
  const decoded = FLOAT_VALUES.get(value);
  return decoded === undefined ? value : decoded;
});

const byteAddress = z.number().int().nonnegative().describe("Byte address (a device address).");
const shape = z.array(z.number().int().nonnegative()).describe("Tensor shape, outermost dimension first.");

/** Params of a `memory` op (`dma_read`, `dma_write`): a copy of `nbytes` bytes. */
export const memoryParamsSchema = z.strictObject({
  src_addr: byteAddress,
  dst_addr: byteAddress,
  nbytes: z.number().int().nonnegative().describe("Bytes copied."),
  src_space: memorySpaceSchema,
  dst_space: memorySpaceSchema,
  rows: z
    .number()
    .int()
    .min(1)
    .exactOptional()
    .describe("Extension (2-D copies): rows of nbytes / rows bytes each; absent = 1 (contiguous)."),
  src_stride: z
    .number()
    .int()
    .nonnegative()
    .exactOptional()
    .describe("Extension: bytes between source rows."),
  dst_stride: z
    .number()
    .int()
    .nonnegative()
    .exactOptional()
    .describe("Extension: bytes between destination rows."),
  mask_runs: z
    .array(z.number().int().nonnegative())
    .exactOptional()
    .describe(
      "Extension (masked copies, tl.load/tl.store with a mask): [offset, bytes, ...] runs within the packed tile (row after row); only they are copied, none crosses a row's end.",
    ),
  mask_fill: z
    .array(z.number().int().min(0).max(255))
    .exactOptional()
    .describe(
      "Extension (masked loads): one element's bytes (little-endian); the destination's bytes outside mask_runs are this pattern repeated (Triton's other).",
    ),
  index_runs: z
    .array(z.number().int())
    .exactOptional()
    .describe(
      "Extension (gathers and scatters, tl.load/tl.store with offsets): [src_offset, dst_offset, bytes, ...] triples from src_addr and dst_addr, copied in order (a later run over the same bytes wins); with mask_fill, the whole destination tile (nbytes) is filled first.",
    ),
  atomic: z
    .strictObject({
      op: atomicOpSchema,
      dtype: dtypeSchema,
      old_addr: byteAddress,
      cmp_addr: byteAddress.exactOptional(),
    })
    .exactOptional()
    .describe(
      "Extension (atomics, tl.atomicAdd/Max/Min/Xchg/Cas): a dma_write whose index_runs are read-modify-writes element by element: old = dst, dst = op(old, src) (cas: src where old equals the cmp_addr tile's element), old stored in the old_addr tile at the element's src offset (zeros elsewhere).",
    ),
});

/** One epilogue step of a GEMM (an extension: ADR-0020 leaves fused ops open). */
export const epilogueStepSchema = z
  .object({
    op: z.string().min(1).describe('The step, such as "relu" or "bias_add"; other keys are its arguments.'),
    scalar: floatSchema
      .exactOptional()
      .describe(
        'The scalar operand of a binary step ("mul", "add", "maximum", ...): a number, or "NaN", "Infinity", "-Infinity", "-0".',
      ),
  })
  .catchall(epilogueArgument)
  .describe(
    'A step and its arguments. A numeric argument that is NaN, an infinity or -0 is written as the string "NaN", "Infinity", "-Infinity" or "-0" and read back as the number, so an argument cannot be one of those four strings.',
  );

/** Params of a `gemm` op: `out = A x B` (A, B transposed as flagged), operands in `addr_space`. */
export const gemmParamsSchema = z.strictObject({
  src_a_addr: byteAddress,
  src_b_addr: byteAddress,
  dst_addr: byteAddress,
  shape_a: shape,
  shape_b: shape,
  shape_out: shape,
  dtype_in: dtypeSchema,
  dtype_acc: dtypeSchema,
  dtype_out: dtypeSchema,
  transpose_a: z.boolean(),
  transpose_b: z.boolean(),
  layout_a: layoutSchema,
  layout_b: layoutSchema,
  layout_out: layoutSchema,
  addr_space: memorySpaceSchema,
  epilogue: z
    .array(epilogueStepSchema)
    .exactOptional()
    .describe("Extension (ADR-0020 open question 'fused operation'): steps applied to the output, in order."),
  accumulate: z
    .boolean()
    .exactOptional()
    .describe("Extension: true when the result is added into dst (K-tile accumulation) instead of stored."),
  scale_a_addr: byteAddress
    .exactOptional()
    .describe(
      "Extension (tl.dotScaled): byte address of A's e8m0 scales, [m, k/32] bytes row-major; element (i, kk) of A counts 2^(byte - 127) times its value (255: NaN).",
    ),
  scale_b_addr: byteAddress
    .exactOptional()
    .describe("Extension (tl.dotScaled): byte address of B's e8m0 scales, [n, k/32] bytes row-major."),
  dtype_in_b: dtypeSchema
    .exactOptional()
    .describe(
      "Extension (mixed-format tl.dotScaled): B's element dtype when it differs from dtype_in (A's); absent: dtype_in.",
    ),
  scale_dtype: z
    .literal("f8e4m3")
    .exactOptional()
    .describe(
      "Extension (nvfp4 tl.dotScaled): the scales are f8e4m3 values, [m, k/16] and [n, k/16] bytes row-major; element (i, kk) of A counts the scale's value times its own. Absent: e8m0 per 32.",
    ),
});

/** Params of a `math` op (`exp`, `add`, `sum`, `where`, ...). */
export const mathParamsSchema = z.strictObject({
  op: z.string().min(1),
  input_addrs: z.array(byteAddress),
  input_shapes: z.array(shape),
  dst_addr: byteAddress,
  shape_out: shape,
  dtype: dtypeSchema,
  axis: z.number().int().nullable().describe("Reduction axis, or null for an elementwise op."),
  addr_space: memorySpaceSchema,
  scalars: z
    .array(mathScalarSchema)
    .exactOptional()
    .describe(
      'Extension (ADR-0020 open question \'math op schema\'): immediate scalar operands; NaN, Infinity, -Infinity and -0 are written as the strings "NaN", "Infinity", "-Infinity", "-0", an integer past ±2^53 (an exact i64 / u64 constant) as a string of its decimal digits.',
    ),
  input_dtype: dtypeSchema
    .exactOptional()
    .describe("Extension: dtype of the inputs when it differs from `dtype` (a cast)."),
  input_dtypes: z
    .array(dtypeSchema)
    .exactOptional()
    .describe("Extension: dtype of each input, when they differ (where's i1 cond); overrides input_dtype."),
  scalar_index: z
    .number()
    .int()
    .nonnegative()
    .exactOptional()
    .describe(
      "Extension: the operand scalars[0] stands for when it is not the last (tl.sub(0, x)); default the last.",
    ),
});

const simTime = z.number().nonnegative().describe("Simulated time in ns.");

const recordId = z.number().int().nonnegative();

// Keys in record order (the order of a JSONL line), so parsed records serialize the same way.
function recordSchema<K extends string, P extends z.ZodType>(kind: K, params: P) {
  return z.strictObject({
    id: recordId.describe("Position of the record in t_start order: 0, 1, 2, ..."),
    t_start: simTime,
    t_end: simTime,
    component_id: z.string().min(1).describe('Topology node id, such as "sip0.cube0.pe0.pe_gemm".'),
    op_kind: z.literal(kind),
    op_name: z.string().min(1).describe('The specific operation, such as "dma_read" or "exp".'),
    params,
    dependency_ids: z.array(recordId).describe("Ids of earlier records this one waits on."),
    site: z
      .string()
      .min(1)
      .exactOptional()
      .describe(
        "Extension: the kernel line (`file:line`) whose tl call issued the command this op serves; absent when unknown (a command list, an IPCQ transfer, a run without per-line tallies).",
      ),
  });
}

/** A `memory` record. */
export const memoryOpRecordSchema = recordSchema("memory", memoryParamsSchema);

/** A `gemm` record. */
export const gemmOpRecordSchema = recordSchema("gemm", gemmParamsSchema);

/** A `math` record. */
export const mathOpRecordSchema = recordSchema("math", mathParamsSchema);

/** One op-log record (one line of an op-log JSONL file), discriminated by `op_kind`. */
export const opRecordSchema = z.discriminatedUnion("op_kind", [
  memoryOpRecordSchema,
  gemmOpRecordSchema,
  mathOpRecordSchema,
]);

/** A memory: `"hbm" | "tcm" | "sram"` (the same names as `@kb/topology`'s `MemorySpace`). */
export type MemorySpace = z.infer<typeof memorySpaceSchema>;
/** `"row_major" | "col_major"`. */
export type Layout = z.infer<typeof layoutSchema>;
/** `"memory" | "gemm" | "math"`. */
export type OpKind = z.infer<typeof opKindSchema>;

/** Params of a `memory` op. Addresses and `nbytes` in bytes. */
export interface MemoryParams {
  /** Source byte address. */
  src_addr: number;
  /** Destination byte address. */
  dst_addr: number;
  /** Bytes copied. */
  nbytes: number;
  /** Memory of `src_addr`. */
  src_space: MemorySpace;
  /** Memory of `dst_addr`. */
  dst_space: MemorySpace;
  /** Extension (2-D copies): rows of `nbytes / rows` bytes each; absent = 1 (contiguous). */
  rows?: number;
  /** Extension: bytes between source row starts. */
  src_stride?: number;
  /** Extension: bytes between destination row starts. */
  dst_stride?: number;
  /**
   * Extension (masked copies): `[offset, bytes, ...]` runs within the packed tile (row `r`, byte
   * `c` at `r * stride + c` on each side); only they are copied. `nbytes` stays the whole tile's.
   */
  mask_runs?: number[];
  /** Extension (masked loads): one element's bytes; the rest of the destination tile repeats them. */
  mask_fill?: number[];
  /**
   * Extension (gathers and scatters): `[src_offset, dst_offset, bytes, ...]` triples from
   * `src_addr` / `dst_addr`, copied in order; `nbytes` is the TCM tile's. With `mask_fill`, the
   * destination tile is filled with it first.
   */
  index_runs?: number[];
  /**
   * Extension (atomics): the `index_runs` are read-modify-writes of `dtype` elements (old = dst,
   * dst = `op`(old, src), old into the `old_addr` tile at the element's src offset; `cmp_addr` the
   * compared tile of a `cas`). See `atomicResult`.
   */
  atomic?: { op: AtomicOp; dtype: Dtype; old_addr: number; cmp_addr?: number };
}

/**
 * One GEMM epilogue step (extension): `op` plus its arguments. In JSONL, numeric arguments that
 * are NaN, infinite or -0 are spelled as strings (see `FLOAT_TEXTS`); in memory they are numbers.
 */
export interface EpilogueStep {
  /** The step, such as `"relu"` or `"bias_add"`. */
  op: string;
  /** The scalar operand of a binary step (any float, NaN, the infinities and -0 included). */
  scalar?: number;
  [key: string]: unknown;
}

/** Params of a `gemm` op. Addresses in bytes, shapes in elements. */
export interface GemmParams {
  /** Byte address of operand A. */
  src_a_addr: number;
  /** Byte address of operand B. */
  src_b_addr: number;
  /** Byte address of the output. */
  dst_addr: number;
  /** Shape of A as stored, e.g. `[128, 256]`. */
  shape_a: number[];
  /** Shape of B as stored, e.g. `[256, 128]`. */
  shape_b: number[];
  /** Shape of the output, e.g. `[128, 128]`. */
  shape_out: number[];
  /** Element type of A and B. */
  dtype_in: Dtype;
  /** Accumulator element type. */
  dtype_acc: Dtype;
  /** Element type of the output. */
  dtype_out: Dtype;
  /** Whether A is used transposed. */
  transpose_a: boolean;
  /** Whether B is used transposed. */
  transpose_b: boolean;
  /** Layout of A. */
  layout_a: Layout;
  /** Layout of B. */
  layout_b: Layout;
  /** Layout of the output. */
  layout_out: Layout;
  /** Memory of all three operands (`"tcm"` per the ADR). */
  addr_space: MemorySpace;
  /** Extension (ADR-0020 open question "fused operation"): steps applied to the output, in order. */
  epilogue?: EpilogueStep[];
  /** Extension: true when the result is added into `dst_addr` (K-tile accumulation) instead of stored. */
  accumulate?: boolean;
  /** Extension (`tl.dotScaled`): A's e8m0 scales, `[m, k/32]` bytes; element (i, kk) of A counts `2^(byte - 127)` times its value. */
  scale_a_addr?: number;
  /** Extension (`tl.dotScaled`): B's e8m0 scales, `[n, k/32]` bytes. */
  scale_b_addr?: number;
  /** Extension (mixed-format `tl.dotScaled`): B's element dtype when it differs from `dtype_in` (A's). */
  dtype_in_b?: Dtype;
  /** Extension (nvfp4 `tl.dotScaled`): f8e4m3 scales, one per 16 along k (`[m, k/16]`, `[n, k/16]`); absent: e8m0 per 32. */
  scale_dtype?: "f8e4m3";
}

/** Params of a `math` op. Addresses in bytes, shapes in elements. */
export interface MathParams {
  /** The operation: `"exp"`, `"add"`, `"sum"`, `"where"`, ... */
  op: string;
  /** Byte addresses of the tensor operands. */
  input_addrs: number[];
  /**
   * Shapes of the tensor operands, one per address; an elementwise op's broadcast to `shape_out`
   * (numpy's rules) where they differ from it.
   */
  input_shapes: number[][];
  /** Byte address of the output. */
  dst_addr: number;
  /** Shape of the output. */
  shape_out: number[];
  /** Element type. */
  dtype: Dtype;
  /** Reduction axis, or null for an elementwise op. */
  axis: number | null;
  /** Memory of the operands (`"tcm"` per the ADR). */
  addr_space: MemorySpace;
  /**
   * Extension (ADR-0020 open question "math op schema"): immediate scalar operands, any float
   * (such as the -Infinity of `tl.full(shape, -Infinity)`); JSONL spells NaN, the infinities and
   * -0 as strings (see `FLOAT_TEXTS`); an integer past ±2^53 (an exact `i64` / `u64` constant)
   * is a BigInt, written as a string of its decimal digits.
   */
  scalars?: (number | bigint)[];
  /** Extension: dtype of the inputs when it differs from `dtype` (a cast). */
  input_dtype?: Dtype;
  /** Extension: dtype of each input when they differ (`where` with an `i1` cond); overrides `input_dtype`. */
  input_dtypes?: Dtype[];
  /**
   * Extension: the operand `scalars[0]` stands for when it is not the last (`tl.sub(0, x)`);
   * absent: the last.
   */
  scalar_index?: number;
}

/** The params type of each op kind. */
export interface OpParamsByKind {
  memory: MemoryParams;
  gemm: GemmParams;
  math: MathParams;
}

/** The fields every record has (ADR-0020 D5). Times in simulated ns. */
interface OpRecordBase {
  /** Position in t_start order (0, 1, 2, ...); stable, and what `dependency_ids` refer to. */
  id: number;
  /** When the component began servicing the op, in simulated ns (ADR-0020 D2). */
  t_start: number;
  /** When the component's service of the op completed, in simulated ns (>= t_start). */
  t_end: number;
  /** Topology node id of the component, such as `"sip0.cube0.pe0.pe_gemm"`. */
  component_id: string;
  /** The specific operation, such as `"dma_read"`, `"gemm_f16"`, `"exp"`. */
  op_name: string;
  /** Ids of earlier records this one must run after (beyond address-based inference). */
  dependency_ids: number[];
  /** The kernel line (`file:line`) whose tl call issued the op's command, when known ({@link OpLogger.annotate}). */
  site?: string;
}

/** A `memory` op record. */
export interface MemoryOpRecord extends OpRecordBase {
  op_kind: "memory";
  params: MemoryParams;
}

/** A `gemm` op record. */
export interface GemmOpRecord extends OpRecordBase {
  op_kind: "gemm";
  params: GemmParams;
}

/** A `math` op record. */
export interface MathOpRecord extends OpRecordBase {
  op_kind: "math";
  params: MathParams;
}

/** One op-log record, discriminated by `op_kind` (ADR-0020 D5). */
export type OpRecord = MemoryOpRecord | GemmOpRecord | MathOpRecord;

/** A record without its times: what two timing models of the same run must agree on. */
export type TimelessOpRecord =
  | Omit<MemoryOpRecord, "t_start" | "t_end">
  | Omit<GemmOpRecord, "t_start" | "t_end">
  | Omit<MathOpRecord, "t_start" | "t_end">;

// The hand-written types and the schemas must describe the same values (checked at compile time).
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
type Assert<T extends true> = T;
type _SchemasMatchTypes = [
  Assert<Same<z.output<typeof memoryParamsSchema>, MemoryParams>>,
  Assert<Same<z.output<typeof gemmParamsSchema>, GemmParams>>,
  Assert<Same<z.output<typeof mathParamsSchema>, MathParams>>,
  Assert<Same<z.output<typeof opRecordSchema>, OpRecord>>,
];

/**
 * Returns `record` without `t_start` and `t_end` (a new object; fields in the record order), to
 * compare the op logs of two timing models of the same run: they must agree on everything else.
 */
export function stripTimes(record: OpRecord): TimelessOpRecord {
  return {
    id: record.id,
    component_id: record.component_id,
    op_kind: record.op_kind,
    op_name: record.op_name,
    params: record.params,
    dependency_ids: record.dependency_ids,
  } as TimelessOpRecord;
}
