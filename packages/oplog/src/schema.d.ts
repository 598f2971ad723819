import * as z from "zod";
/** The element types of tensors in op params. */
export declare const dtypeSchema: z.ZodEnum<{
    f32: "f32";
    f16: "f16";
    bf16: "bf16";
    i8: "i8";
    i32: "i32";
    i1: "i1";
    u32: "u32";
}>;
/** A memory an address lives in: HBM, a PE's TCM, or the cube SRAM. */
export declare const memorySpaceSchema: z.ZodEnum<{
    hbm: "hbm";
    tcm: "tcm";
    sram: "sram";
}>;
/** Element order of a 2-D tensor in memory. */
export declare const layoutSchema: z.ZodEnum<{
    row_major: "row_major";
    col_major: "col_major";
}>;
/** The executor-dispatch level of the op classification (ADR-0020 D5). */
export declare const opKindSchema: z.ZodEnum<{
    memory: "memory";
    gemm: "gemm";
    math: "math";
}>;
/**
 * How the JSONL file spells the float values JSON has no number for: NaN and the infinities (which
 * `JSON.stringify` would write as `null`) and -0 (which it would write as `0`; the sign matters for
 * bit-exact replay: a later `1 / x` gives -Infinity, not Infinity). Each string is the number's
 * usual decimal text, which the standard float parser of most languages reads back (`Number`,
 * Python's `float`, Go's `strconv.ParseFloat`, Rust's `str::parse::<f64>`).
 */
export declare const FLOAT_TEXTS: readonly ["NaN", "Infinity", "-Infinity", "-0"];
/** One of {@link FLOAT_TEXTS}. */
export type FloatText = (typeof FLOAT_TEXTS)[number];
/**
 * A float field of the format (math `scalars`, the numeric arguments of gemm `epilogue` steps):
 * any number, including NaN, the infinities and -0 (an in-memory record), or one of
 * {@link FLOAT_TEXTS} (how a JSONL line spells those), decoded to the number. Anything else, such
 * as the `null` that `JSON.stringify` leaves for NaN, is an issue saying what to write instead.
 */
export declare const floatSchema: z.ZodPipe<z.ZodUnknown, z.ZodTransform<number, unknown>>;
/** The read-modify-write ops of an atomic (`atomic.op` of a memory record; see `atomicResult`). */
export declare const atomicOpSchema: z.ZodEnum<{
    add: "add";
    max: "max";
    min: "min";
    xchg: "xchg";
    cas: "cas";
}>;
/** One of the atomic ops (`tl.atomicAdd` is `add`, ...). */
export type AtomicOp = z.output<typeof atomicOpSchema>;
/** Params of a `memory` op (`dma_read`, `dma_write`): a copy of `nbytes` bytes. */
export declare const memoryParamsSchema: z.ZodObject<{
    src_addr: z.ZodNumber;
    dst_addr: z.ZodNumber;
    nbytes: z.ZodNumber;
    src_space: z.ZodEnum<{
        hbm: "hbm";
        tcm: "tcm";
        sram: "sram";
    }>;
    dst_space: z.ZodEnum<{
        hbm: "hbm";
        tcm: "tcm";
        sram: "sram";
    }>;
    rows: z.ZodExactOptional<z.ZodNumber>;
    src_stride: z.ZodExactOptional<z.ZodNumber>;
    dst_stride: z.ZodExactOptional<z.ZodNumber>;
    mask_runs: z.ZodExactOptional<z.ZodArray<z.ZodNumber>>;
    mask_fill: z.ZodExactOptional<z.ZodArray<z.ZodNumber>>;
    index_runs: z.ZodExactOptional<z.ZodArray<z.ZodNumber>>;
    atomic: z.ZodExactOptional<z.ZodObject<{
        op: z.ZodEnum<{
            add: "add";
            max: "max";
            min: "min";
            xchg: "xchg";
            cas: "cas";
        }>;
        dtype: z.ZodEnum<{
            f32: "f32";
            f16: "f16";
            bf16: "bf16";
            i8: "i8";
            i32: "i32";
            i1: "i1";
            u32: "u32";
        }>;
        old_addr: z.ZodNumber;
        cmp_addr: z.ZodExactOptional<z.ZodNumber>;
    }, z.core.$strict>>;
}, z.core.$strict>;
/** One epilogue step of a GEMM (an extension: ADR-0020 leaves fused ops open). */
export declare const epilogueStepSchema: z.ZodObject<{
    op: z.ZodString;
    scalar: z.ZodExactOptional<z.ZodPipe<z.ZodUnknown, z.ZodTransform<number, unknown>>>;
}, z.core.$catchall<z.ZodPipe<z.ZodUnknown, z.ZodTransform<unknown, unknown>>>>;
/** Params of a `gemm` op: `out = A x B` (A, B transposed as flagged), operands in `addr_space`. */
export declare const gemmParamsSchema: z.ZodObject<{
    src_a_addr: z.ZodNumber;
    src_b_addr: z.ZodNumber;
    dst_addr: z.ZodNumber;
    shape_a: z.ZodArray<z.ZodNumber>;
    shape_b: z.ZodArray<z.ZodNumber>;
    shape_out: z.ZodArray<z.ZodNumber>;
    dtype_in: z.ZodEnum<{
        f32: "f32";
        f16: "f16";
        bf16: "bf16";
        i8: "i8";
        i32: "i32";
        i1: "i1";
        u32: "u32";
    }>;
    dtype_acc: z.ZodEnum<{
        f32: "f32";
        f16: "f16";
        bf16: "bf16";
        i8: "i8";
        i32: "i32";
        i1: "i1";
        u32: "u32";
    }>;
    dtype_out: z.ZodEnum<{
        f32: "f32";
        f16: "f16";
        bf16: "bf16";
        i8: "i8";
        i32: "i32";
        i1: "i1";
        u32: "u32";
    }>;
    transpose_a: z.ZodBoolean;
    transpose_b: z.ZodBoolean;
    layout_a: z.ZodEnum<{
        row_major: "row_major";
        col_major: "col_major";
    }>;
    layout_b: z.ZodEnum<{
        row_major: "row_major";
        col_major: "col_major";
    }>;
    layout_out: z.ZodEnum<{
        row_major: "row_major";
        col_major: "col_major";
    }>;
    addr_space: z.ZodEnum<{
        hbm: "hbm";
        tcm: "tcm";
        sram: "sram";
    }>;
    epilogue: z.ZodExactOptional<z.ZodArray<z.ZodObject<{
        op: z.ZodString;
        scalar: z.ZodExactOptional<z.ZodPipe<z.ZodUnknown, z.ZodTransform<number, unknown>>>;
    }, z.core.$catchall<z.ZodPipe<z.ZodUnknown, z.ZodTransform<unknown, unknown>>>>>>;
    accumulate: z.ZodExactOptional<z.ZodBoolean>;
}, z.core.$strict>;
/** Params of a `math` op (`exp`, `add`, `sum`, `where`, ...). */
export declare const mathParamsSchema: z.ZodObject<{
    op: z.ZodString;
    input_addrs: z.ZodArray<z.ZodNumber>;
    input_shapes: z.ZodArray<z.ZodArray<z.ZodNumber>>;
    dst_addr: z.ZodNumber;
    shape_out: z.ZodArray<z.ZodNumber>;
    dtype: z.ZodEnum<{
        f32: "f32";
        f16: "f16";
        bf16: "bf16";
        i8: "i8";
        i32: "i32";
        i1: "i1";
        u32: "u32";
    }>;
    axis: z.ZodNullable<z.ZodNumber>;
    addr_space: z.ZodEnum<{
        hbm: "hbm";
        tcm: "tcm";
        sram: "sram";
    }>;
    scalars: z.ZodExactOptional<z.ZodArray<z.ZodPipe<z.ZodUnknown, z.ZodTransform<number, unknown>>>>;
    input_dtype: z.ZodExactOptional<z.ZodEnum<{
        f32: "f32";
        f16: "f16";
        bf16: "bf16";
        i8: "i8";
        i32: "i32";
        i1: "i1";
        u32: "u32";
    }>>;
    input_dtypes: z.ZodExactOptional<z.ZodArray<z.ZodEnum<{
        f32: "f32";
        f16: "f16";
        bf16: "bf16";
        i8: "i8";
        i32: "i32";
        i1: "i1";
        u32: "u32";
    }>>>;
    scalar_index: z.ZodExactOptional<z.ZodNumber>;
}, z.core.$strict>;
/** A `memory` record. */
export declare const memoryOpRecordSchema: z.ZodObject<{
    id: z.ZodNumber;
    t_start: z.ZodNumber;
    t_end: z.ZodNumber;
    component_id: z.ZodString;
    op_kind: z.ZodLiteral<"memory">;
    op_name: z.ZodString;
    params: z.ZodObject<{
        src_addr: z.ZodNumber;
        dst_addr: z.ZodNumber;
        nbytes: z.ZodNumber;
        src_space: z.ZodEnum<{
            hbm: "hbm";
            tcm: "tcm";
            sram: "sram";
        }>;
        dst_space: z.ZodEnum<{
            hbm: "hbm";
            tcm: "tcm";
            sram: "sram";
        }>;
        rows: z.ZodExactOptional<z.ZodNumber>;
        src_stride: z.ZodExactOptional<z.ZodNumber>;
        dst_stride: z.ZodExactOptional<z.ZodNumber>;
        mask_runs: z.ZodExactOptional<z.ZodArray<z.ZodNumber>>;
        mask_fill: z.ZodExactOptional<z.ZodArray<z.ZodNumber>>;
        index_runs: z.ZodExactOptional<z.ZodArray<z.ZodNumber>>;
        atomic: z.ZodExactOptional<z.ZodObject<{
            op: z.ZodEnum<{
                add: "add";
                max: "max";
                min: "min";
                xchg: "xchg";
                cas: "cas";
            }>;
            dtype: z.ZodEnum<{
                f32: "f32";
                f16: "f16";
                bf16: "bf16";
                i8: "i8";
                i32: "i32";
                i1: "i1";
                u32: "u32";
            }>;
            old_addr: z.ZodNumber;
            cmp_addr: z.ZodExactOptional<z.ZodNumber>;
        }, z.core.$strict>>;
    }, z.core.$strict>;
    dependency_ids: z.ZodArray<z.ZodNumber>;
}, z.core.$strict>;
/** A `gemm` record. */
export declare const gemmOpRecordSchema: z.ZodObject<{
    id: z.ZodNumber;
    t_start: z.ZodNumber;
    t_end: z.ZodNumber;
    component_id: z.ZodString;
    op_kind: z.ZodLiteral<"gemm">;
    op_name: z.ZodString;
    params: z.ZodObject<{
        src_a_addr: z.ZodNumber;
        src_b_addr: z.ZodNumber;
        dst_addr: z.ZodNumber;
        shape_a: z.ZodArray<z.ZodNumber>;
        shape_b: z.ZodArray<z.ZodNumber>;
        shape_out: z.ZodArray<z.ZodNumber>;
        dtype_in: z.ZodEnum<{
            f32: "f32";
            f16: "f16";
            bf16: "bf16";
            i8: "i8";
            i32: "i32";
            i1: "i1";
            u32: "u32";
        }>;
        dtype_acc: z.ZodEnum<{
            f32: "f32";
            f16: "f16";
            bf16: "bf16";
            i8: "i8";
            i32: "i32";
            i1: "i1";
            u32: "u32";
        }>;
        dtype_out: z.ZodEnum<{
            f32: "f32";
            f16: "f16";
            bf16: "bf16";
            i8: "i8";
            i32: "i32";
            i1: "i1";
            u32: "u32";
        }>;
        transpose_a: z.ZodBoolean;
        transpose_b: z.ZodBoolean;
        layout_a: z.ZodEnum<{
            row_major: "row_major";
            col_major: "col_major";
        }>;
        layout_b: z.ZodEnum<{
            row_major: "row_major";
            col_major: "col_major";
        }>;
        layout_out: z.ZodEnum<{
            row_major: "row_major";
            col_major: "col_major";
        }>;
        addr_space: z.ZodEnum<{
            hbm: "hbm";
            tcm: "tcm";
            sram: "sram";
        }>;
        epilogue: z.ZodExactOptional<z.ZodArray<z.ZodObject<{
            op: z.ZodString;
            scalar: z.ZodExactOptional<z.ZodPipe<z.ZodUnknown, z.ZodTransform<number, unknown>>>;
        }, z.core.$catchall<z.ZodPipe<z.ZodUnknown, z.ZodTransform<unknown, unknown>>>>>>;
        accumulate: z.ZodExactOptional<z.ZodBoolean>;
    }, z.core.$strict>;
    dependency_ids: z.ZodArray<z.ZodNumber>;
}, z.core.$strict>;
/** A `math` record. */
export declare const mathOpRecordSchema: z.ZodObject<{
    id: z.ZodNumber;
    t_start: z.ZodNumber;
    t_end: z.ZodNumber;
    component_id: z.ZodString;
    op_kind: z.ZodLiteral<"math">;
    op_name: z.ZodString;
    params: z.ZodObject<{
        op: z.ZodString;
        input_addrs: z.ZodArray<z.ZodNumber>;
        input_shapes: z.ZodArray<z.ZodArray<z.ZodNumber>>;
        dst_addr: z.ZodNumber;
        shape_out: z.ZodArray<z.ZodNumber>;
        dtype: z.ZodEnum<{
            f32: "f32";
            f16: "f16";
            bf16: "bf16";
            i8: "i8";
            i32: "i32";
            i1: "i1";
            u32: "u32";
        }>;
        axis: z.ZodNullable<z.ZodNumber>;
        addr_space: z.ZodEnum<{
            hbm: "hbm";
            tcm: "tcm";
            sram: "sram";
        }>;
        scalars: z.ZodExactOptional<z.ZodArray<z.ZodPipe<z.ZodUnknown, z.ZodTransform<number, unknown>>>>;
        input_dtype: z.ZodExactOptional<z.ZodEnum<{
            f32: "f32";
            f16: "f16";
            bf16: "bf16";
            i8: "i8";
            i32: "i32";
            i1: "i1";
            u32: "u32";
        }>>;
        input_dtypes: z.ZodExactOptional<z.ZodArray<z.ZodEnum<{
            f32: "f32";
            f16: "f16";
            bf16: "bf16";
            i8: "i8";
            i32: "i32";
            i1: "i1";
            u32: "u32";
        }>>>;
        scalar_index: z.ZodExactOptional<z.ZodNumber>;
    }, z.core.$strict>;
    dependency_ids: z.ZodArray<z.ZodNumber>;
}, z.core.$strict>;
/** One op-log record (one line of an op-log JSONL file), discriminated by `op_kind`. */
export declare const opRecordSchema: z.ZodDiscriminatedUnion<[z.ZodObject<{
    id: z.ZodNumber;
    t_start: z.ZodNumber;
    t_end: z.ZodNumber;
    component_id: z.ZodString;
    op_kind: z.ZodLiteral<"memory">;
    op_name: z.ZodString;
    params: z.ZodObject<{
        src_addr: z.ZodNumber;
        dst_addr: z.ZodNumber;
        nbytes: z.ZodNumber;
        src_space: z.ZodEnum<{
            hbm: "hbm";
            tcm: "tcm";
            sram: "sram";
        }>;
        dst_space: z.ZodEnum<{
            hbm: "hbm";
            tcm: "tcm";
            sram: "sram";
        }>;
        rows: z.ZodExactOptional<z.ZodNumber>;
        src_stride: z.ZodExactOptional<z.ZodNumber>;
        dst_stride: z.ZodExactOptional<z.ZodNumber>;
        mask_runs: z.ZodExactOptional<z.ZodArray<z.ZodNumber>>;
        mask_fill: z.ZodExactOptional<z.ZodArray<z.ZodNumber>>;
        index_runs: z.ZodExactOptional<z.ZodArray<z.ZodNumber>>;
        atomic: z.ZodExactOptional<z.ZodObject<{
            op: z.ZodEnum<{
                add: "add";
                max: "max";
                min: "min";
                xchg: "xchg";
                cas: "cas";
            }>;
            dtype: z.ZodEnum<{
                f32: "f32";
                f16: "f16";
                bf16: "bf16";
                i8: "i8";
                i32: "i32";
                i1: "i1";
                u32: "u32";
            }>;
            old_addr: z.ZodNumber;
            cmp_addr: z.ZodExactOptional<z.ZodNumber>;
        }, z.core.$strict>>;
    }, z.core.$strict>;
    dependency_ids: z.ZodArray<z.ZodNumber>;
}, z.core.$strict>, z.ZodObject<{
    id: z.ZodNumber;
    t_start: z.ZodNumber;
    t_end: z.ZodNumber;
    component_id: z.ZodString;
    op_kind: z.ZodLiteral<"gemm">;
    op_name: z.ZodString;
    params: z.ZodObject<{
        src_a_addr: z.ZodNumber;
        src_b_addr: z.ZodNumber;
        dst_addr: z.ZodNumber;
        shape_a: z.ZodArray<z.ZodNumber>;
        shape_b: z.ZodArray<z.ZodNumber>;
        shape_out: z.ZodArray<z.ZodNumber>;
        dtype_in: z.ZodEnum<{
            f32: "f32";
            f16: "f16";
            bf16: "bf16";
            i8: "i8";
            i32: "i32";
            i1: "i1";
            u32: "u32";
        }>;
        dtype_acc: z.ZodEnum<{
            f32: "f32";
            f16: "f16";
            bf16: "bf16";
            i8: "i8";
            i32: "i32";
            i1: "i1";
            u32: "u32";
        }>;
        dtype_out: z.ZodEnum<{
            f32: "f32";
            f16: "f16";
            bf16: "bf16";
            i8: "i8";
            i32: "i32";
            i1: "i1";
            u32: "u32";
        }>;
        transpose_a: z.ZodBoolean;
        transpose_b: z.ZodBoolean;
        layout_a: z.ZodEnum<{
            row_major: "row_major";
            col_major: "col_major";
        }>;
        layout_b: z.ZodEnum<{
            row_major: "row_major";
            col_major: "col_major";
        }>;
        layout_out: z.ZodEnum<{
            row_major: "row_major";
            col_major: "col_major";
        }>;
        addr_space: z.ZodEnum<{
            hbm: "hbm";
            tcm: "tcm";
            sram: "sram";
        }>;
        epilogue: z.ZodExactOptional<z.ZodArray<z.ZodObject<{
            op: z.ZodString;
            scalar: z.ZodExactOptional<z.ZodPipe<z.ZodUnknown, z.ZodTransform<number, unknown>>>;
        }, z.core.$catchall<z.ZodPipe<z.ZodUnknown, z.ZodTransform<unknown, unknown>>>>>>;
        accumulate: z.ZodExactOptional<z.ZodBoolean>;
    }, z.core.$strict>;
    dependency_ids: z.ZodArray<z.ZodNumber>;
}, z.core.$strict>, z.ZodObject<{
    id: z.ZodNumber;
    t_start: z.ZodNumber;
    t_end: z.ZodNumber;
    component_id: z.ZodString;
    op_kind: z.ZodLiteral<"math">;
    op_name: z.ZodString;
    params: z.ZodObject<{
        op: z.ZodString;
        input_addrs: z.ZodArray<z.ZodNumber>;
        input_shapes: z.ZodArray<z.ZodArray<z.ZodNumber>>;
        dst_addr: z.ZodNumber;
        shape_out: z.ZodArray<z.ZodNumber>;
        dtype: z.ZodEnum<{
            f32: "f32";
            f16: "f16";
            bf16: "bf16";
            i8: "i8";
            i32: "i32";
            i1: "i1";
            u32: "u32";
        }>;
        axis: z.ZodNullable<z.ZodNumber>;
        addr_space: z.ZodEnum<{
            hbm: "hbm";
            tcm: "tcm";
            sram: "sram";
        }>;
        scalars: z.ZodExactOptional<z.ZodArray<z.ZodPipe<z.ZodUnknown, z.ZodTransform<number, unknown>>>>;
        input_dtype: z.ZodExactOptional<z.ZodEnum<{
            f32: "f32";
            f16: "f16";
            bf16: "bf16";
            i8: "i8";
            i32: "i32";
            i1: "i1";
            u32: "u32";
        }>>;
        input_dtypes: z.ZodExactOptional<z.ZodArray<z.ZodEnum<{
            f32: "f32";
            f16: "f16";
            bf16: "bf16";
            i8: "i8";
            i32: "i32";
            i1: "i1";
            u32: "u32";
        }>>>;
        scalar_index: z.ZodExactOptional<z.ZodNumber>;
    }, z.core.$strict>;
    dependency_ids: z.ZodArray<z.ZodNumber>;
}, z.core.$strict>], "op_kind">;
/** An element type: `"f32" | "f16" | "bf16" | "i8" | "i32" | "i1" | "u32"` (i1: a boolean, one byte; u32 unsigned). */
export type Dtype = z.infer<typeof dtypeSchema>;
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
    atomic?: {
        op: AtomicOp;
        dtype: Dtype;
        old_addr: number;
        cmp_addr?: number;
    };
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
     * -0 as strings (see `FLOAT_TEXTS`).
     */
    scalars?: number[];
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
export type TimelessOpRecord = Omit<MemoryOpRecord, "t_start" | "t_end"> | Omit<GemmOpRecord, "t_start" | "t_end"> | Omit<MathOpRecord, "t_start" | "t_end">;
/**
 * Returns `record` without `t_start` and `t_end` (a new object; fields in the record order), to
 * compare the op logs of two timing models of the same run: they must agree on everything else.
 */
export declare function stripTimes(record: OpRecord): TimelessOpRecord;
export {};
