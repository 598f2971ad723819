// The hazards phase 2's batching checks (executor.ts): the byte ranges each record reads and
// writes, and whether two records conflict (RAW, WAW, WAR), so a GEMM may be pulled forward past
// records it does not touch. @internal to the package.
import { type GemmOpRecord, type OpRecord, scaleBlockOf } from "@kb/oplog";
import { DTYPE_BYTES, shapeSize } from "@kb/tensor";
import { indexedSpans } from "./indexed-copy.js";

/** A byte range an op reads or writes: [start, end). */
interface Range {
  readonly start: number;
  readonly end: number;
}

/** What a record reads and writes. */
export interface Access {
  readonly reads: readonly Range[];
  readonly writes: readonly Range[];
}

/** The batching signature of a GEMM. */
export function gemmKey(record: OpRecord): string {
  const p = (record as GemmOpRecord).params;
  return `${record.op_name}|${p.shape_a}|${p.shape_b}|${p.shape_out}|${p.dtype_in}|${p.dtype_in_b}|${p.dtype_acc}|${p.dtype_out}|${p.transpose_a}|${p.transpose_b}|${p.layout_a}|${p.layout_b}|${p.layout_out}|${p.accumulate === true}|${p.scale_dtype}`;
}

/** What a record reads and writes (strided copies by their span: conservative). */
export function accessesOf(record: OpRecord): Access {
  switch (record.op_kind) {
    case "memory": {
      const p = record.params;
      if (p.index_runs !== undefined) {
        const { src, dst } = indexedSpans(p, p.index_runs);
        const span = (from: [number, number]) =>
          from[1] > from[0] ? [range(from[0], from[1] - from[0])] : [];
        const atomic = p.atomic;
        if (atomic === undefined) return { reads: span(src), writes: span(dst) };
        // An atomic reads what it writes, and the operand (and cas's compared) tile, and writes old.
        const cmp = atomic.cmp_addr === undefined ? [] : [range(atomic.cmp_addr, p.nbytes)];
        return {
          reads: [...span(src), ...span(dst), ...cmp],
          writes: [...span(dst), range(atomic.old_addr, p.nbytes)],
        };
      }
      const rows = p.rows ?? 1;
      const rowBytes = p.nbytes / rows;
      const srcSpan = (rows - 1) * (p.src_stride ?? rowBytes) + rowBytes;
      const dstSpan = (rows - 1) * (p.dst_stride ?? rowBytes) + rowBytes;
      return { reads: [range(p.src_addr, srcSpan)], writes: [range(p.dst_addr, dstSpan)] };
    }
    case "gemm": {
      const p = record.params;
      const size = DTYPE_BYTES[p.dtype_in];
      const out = range(p.dst_addr, shapeSize(p.shape_out) * DTYPE_BYTES[p.dtype_out]);
      const reads = [
        range(p.src_a_addr, shapeSize(p.shape_a) * size),
        range(p.src_b_addr, shapeSize(p.shape_b) * DTYPE_BYTES[p.dtype_in_b ?? p.dtype_in]),
      ];
      if (p.accumulate === true) reads.push(out);
      const [m, n] = p.shape_out as [number, number];
      const blocks = Math.ceil(shapeSize(p.shape_a) / m / scaleBlockOf(p.scale_dtype));
      if (p.scale_a_addr !== undefined) reads.push(range(p.scale_a_addr, m * blocks));
      if (p.scale_b_addr !== undefined) reads.push(range(p.scale_b_addr, n * blocks));
      return { reads, writes: [out] };
    }
    case "math": {
      const p = record.params;
      const size = (i: number) => DTYPE_BYTES[p.input_dtypes?.[i] ?? p.input_dtype ?? p.dtype];
      return {
        reads: p.input_addrs.map((address, i) =>
          range(address, shapeSize(p.input_shapes[i] ?? p.shape_out) * size(i)),
        ),
        writes: [range(p.dst_addr, shapeSize(p.shape_out) * DTYPE_BYTES[p.dtype])],
      };
    }
  }
}

function range(start: number, bytes: number): Range {
  return { start, end: start + bytes };
}

/** A RAW, WAW or WAR hazard between two records' accesses. */
export function conflict(mine: Access, other: Access): boolean {
  return (
    overlapsAny(mine.reads, other.writes) ||
    overlapsAny(mine.writes, other.writes) ||
    overlapsAny(mine.writes, other.reads)
  );
}

function overlapsAny(a: readonly Range[], b: readonly Range[]): boolean {
  for (const x of a) for (const y of b) if (x.start < y.end && y.start < x.end) return true;
  return false;
}
