import { type Component, gemmPeakFlopsPerNs, gemmTimingOf, type Machine } from "@kb/components";
import type { LaunchDetail } from "../launch-results.js";

/** The GEMM input dtypes whose peaks the results always state (others when they ran). */
export const GEMM_DTYPES: readonly string[] = ["i8", "f16", "bf16", "f32"];

/** The per-dtype key of the FLOPs of a PE_GEMM impl that does not count them by dtype. */
const UNKNOWN_DTYPE = "unknown";

/** Counters besides `WorkSnapshot`'s, at an instant. */
export interface LevelSnapshot {
  readonly gemmFlopsByDtype: Readonly<Record<string, number>>;
  readonly dmaBytes: number;
  readonly fabricLinkBytes: number;
  readonly tcmBytes: number;
  readonly fetchStoreBytes: number;
}

/** @internal The per-dtype GEMM FLOPs and the bytes per level of every component now. */
export function snapshotLevels(machine: Machine): LevelSnapshot {
  const gemmFlopsByDtype: Record<string, number> = {};
  let dmaBytes = 0;
  let tcmBytes = 0;
  let fetchStoreBytes = 0;
  for (const component of machine.components) {
    if (component.kind === "pe_gemm") addFlopsByDtype(gemmFlopsByDtype, component);
    else if (component.kind === "pe_dma") dmaBytes += component.stats.bytes;
    else if (component.kind === "pe_tcm") tcmBytes += component.stats.bytes;
    else if (component.kind === "pe_fetch_store") fetchStoreBytes += component.stats.bytes;
  }
  let fabricLinkBytes = 0;
  for (const link of machine.fabric.usedLinks()) fabricLinkBytes += link.bytes;
  return { gemmFlopsByDtype, dmaBytes, fabricLinkBytes, tcmBytes, fetchStoreBytes };
}

function addFlopsByDtype(into: Record<string, number>, component: Component): void {
  const byDtype = gemmTimingOf(component)?.flopsByDtype;
  if (byDtype === undefined) {
    if (component.stats.flops > 0) into[UNKNOWN_DTYPE] = (into[UNKNOWN_DTYPE] ?? 0) + component.stats.flops;
    return;
  }
  for (const [dtype, flops] of Object.entries(byDtype)) into[dtype] = (into[dtype] ?? 0) + flops;
}

/**
 * The summed peak per GEMM input dtype of the PE_GEMMs in `engines`, FLOPs per ns: each impl's
 * own {@link gemmPeakFlopsPerNs}, or its `peak()` for every dtype when it states no timing.
 * Always has {@link GEMM_DTYPES}, plus `extra` dtypes (those that ran).
 */
export function gemmPeaksByDtype(
  engines: readonly Component[],
  extra: readonly string[] = [],
): Record<string, number> {
  const dtypes = [...new Set([...GEMM_DTYPES, ...extra.filter((dtype) => dtype !== UNKNOWN_DTYPE)])];
  const peaks: Record<string, number> = {};
  for (const dtype of dtypes) peaks[dtype] = 0;
  for (const engine of engines) {
    const timing = gemmTimingOf(engine);
    const fallback = engine.peak().flopsPerNs ?? 0;
    for (const dtype of dtypes)
      peaks[dtype] = (peaks[dtype] ?? 0) + (timing === null ? fallback : gemmPeakFlopsPerNs(timing, dtype));
  }
  return peaks;
}

/** @internal The per-dtype peaks of the PE_GEMMs that ran in the whole run, FLOP/s. */
export function runGemmPeaksByDtype(machine: Machine): Record<string, number> {
  const engines = machine.components.filter((c) => c.kind === "pe_gemm" && c.stats.ops > 0);
  const ran = engines.flatMap((engine) => Object.keys(gemmTimingOf(engine)?.flopsByDtype ?? {}));
  const perS: Record<string, number> = {};
  for (const [dtype, perNs] of Object.entries(gemmPeaksByDtype(engines, ran))) perS[dtype] = perNs * 1e9;
  return perS;
}

/** The footprints of the launches in flight, per machine. */
const openFootprints = new WeakMap<Machine, Set<HbmFootprint>>();

/** Sets the machine's observer to feed every open footprint (none: no observer, one: its own). */
function observeAll(machine: Machine, open: ReadonlySet<HbmFootprint>): void {
  if (open.size === 0) machine.hbmAccessObserver = null;
  else if (open.size === 1) machine.hbmAccessObserver = ([...open][0] as HbmFootprint).observe;
  else {
    const all = [...open];
    machine.hbmAccessObserver = (write, address, rows, rowBytes, stride) => {
      for (const footprint of all) footprint.observe(write, address, rows, rowBytes, stride);
    };
  }
}

/**
 * The distinct HBM bytes a launch read and wrote: the PE_DMA blocks (through
 * `Machine.hbmAccessObserver`) as half-open address intervals, reads and writes apart, sorted
 * and merged when a list grows past twice what it held after its last merge (at least
 * {@link COMPACT_AT} intervals) and at the end, so memory stays proportional to the distinct
 * ranges rather than to the blocks, and the merges cost O(n log n) over a launch (amortised).
 */
export class HbmFootprint {
  private readonly reads: number[] = [];
  private readonly writes: number[] = [];
  /** Lengths (numbers, 2 per interval) at which each list is merged next. */
  private readsLimit = 2 * COMPACT_AT;
  private writesLimit = 2 * COMPACT_AT;
  /**
   * The strided blocks seen last, 4 numbers a slot (address, rows with a write's negative,
   * rowBytes, stride), a slot by a hash of the block: a block met again adds nothing to the union,
   * so its rows are not listed again. A GEMM reads each tile of one operand once per tile of the
   * other: in the 8b layer (seq 128) 40% of the blocks, 47% of the rows. Made with the first
   * strided block.
   */
  private seen: Float64Array | null = null;

  /** The distinct HBM bytes the PE_DMAs of `machine` move while `run` runs (its observer meanwhile). */
  static async during(machine: Machine, run: () => Promise<void>): Promise<HbmFootprint> {
    const footprint = new HbmFootprint();
    // Launches of host streams overlap: each block goes to every footprint open meanwhile.
    let open = openFootprints.get(machine);
    if (open === undefined) {
      open = new Set();
      openFootprints.set(machine, open);
    }
    open.add(footprint);
    observeAll(machine, open);
    try {
      await run();
    } finally {
      open.delete(footprint);
      observeAll(machine, open);
    }
    return footprint;
  }

  /** The observer to set on the machine for the launch. */
  readonly observe = (write: boolean, address: number, rows: number, rowBytes: number, stride: number) => {
    const into = write ? this.writes : this.reads;
    if (rows === 1 || stride === rowBytes) add(into, address, address + rows * rowBytes);
    else if (this.seenBefore(write, address, rows, rowBytes, stride)) return;
    else
      for (let row = 0; row < rows; row++)
        add(into, address + row * stride, address + row * stride + rowBytes);
    if (write ? into.length > this.writesLimit : into.length > this.readsLimit) {
      compact(into);
      const limit = Math.max(2 * COMPACT_AT, 2 * into.length);
      if (write) this.writesLimit = limit;
      else this.readsLimit = limit;
    }
  };

  /**
   * Whether the strided block (`rows` > 1) is the one its slot of {@link seen} holds (the union
   * has its rows already); else the slot takes it. A block that lost its slot is listed again,
   * which the merge absorbs: the cache only saves work, never changes the count.
   */
  private seenBefore(
    write: boolean,
    address: number,
    rows: number,
    rowBytes: number,
    stride: number,
  ): boolean {
    this.seen ??= new Float64Array(4 * SEEN_SLOTS);
    const seen = this.seen;
    const tag = write ? -rows : rows;
    const slot = (((address / 64) ^ Math.imul(rows, 0x9e3779b1) ^ stride) & (SEEN_SLOTS - 1)) * 4;
    if (
      seen[slot] === address &&
      seen[slot + 1] === tag &&
      seen[slot + 2] === rowBytes &&
      seen[slot + 3] === stride
    )
      return true;
    seen[slot] = address;
    seen[slot + 1] = tag;
    seen[slot + 2] = rowBytes;
    seen[slot + 3] = stride;
    return false;
  }

  /** Distinct bytes read so far. */
  get readBytes(): number {
    return compact(this.reads);
  }

  /** Distinct bytes written so far. */
  get writeBytes(): number {
    return compact(this.writes);
  }
}

/** Intervals an {@link HbmFootprint} list holds before it is merged. */
const COMPACT_AT = 1 << 16;

/** Slots of an {@link HbmFootprint}'s cache of strided blocks (a power of two). */
const SEEN_SLOTS = 1 << 12;

/**
 * Appends the interval `[start, end)` to `list`, or widens the last one when it starts inside or
 * at the end of it (a stream of blocks, one after another): the same union, one interval.
 */
function add(list: number[], start: number, end: number): void {
  const last = list.length - 1;
  if (last > 0 && start <= (list[last] as number) && start >= (list[last - 1] as number)) {
    if (end > (list[last] as number)) list[last] = end;
  } else list.push(start, end);
}

/**
 * Merges the `[start, end, ...]` intervals of `list` in place into their union, sorted (intervals
 * that overlap or touch become one); returns its total length. The starts and the ends are sorted
 * apart (numbers, no pairs): sweeping both in order, starts first at a tie, the intervals open
 * at a point are the starts passed less the ends passed, and a union's piece ends where that
 * count falls to zero.
 */
function compact(list: number[]): number {
  const count = list.length >> 1;
  const starts = new Float64Array(count);
  const ends = new Float64Array(count);
  for (let index = 0; index < count; index++) {
    starts[index] = list[2 * index] as number;
    ends[index] = list[2 * index + 1] as number;
  }
  starts.sort();
  ends.sort();
  list.length = 0;
  let total = 0;
  let nextStart = 0;
  let nextEnd = 0;
  while (nextStart < count) {
    const start = starts[nextStart] as number;
    let open = 0;
    let end = start;
    do {
      while (
        nextStart < count &&
        (open === 0 || (starts[nextStart] as number) <= (ends[nextEnd] as number))
      ) {
        open++;
        nextStart++;
      }
      end = ends[nextEnd] as number;
      nextEnd++;
      open--;
    } while (open > 0);
    list.push(start, end);
    total += end - start;
  }
  return total;
}

/** @internal The PE_GEMMs that serviced a message since `before` (ops counters by component id). */
export function gemmEnginesSince(
  machine: Machine,
  before: ReadonlyMap<string, { readonly ops: number }>,
): Component[] {
  return machine.components.filter(
    (component) =>
      component.kind === "pe_gemm" && component.stats.ops !== (before.get(component.id)?.ops ?? 0),
  );
}

/** What {@link launchDetail} needs of a launch besides the machine's counters. */
export interface LaunchWindow {
  readonly startNs: number;
  readonly endNs: number;
  readonly gemmFlops: number;
  readonly mathFlops: number;
  readonly hbmBytes: number;
  readonly rooflineNs: number;
  /** Peaks (per ns) of the components that did the work, as `Work.peaks`. */
  readonly peaks: { readonly gemm: number; readonly math: number; readonly hbm: number };
}

/**
 * @internal The per-launch figures: the difference of the level counters, the minimal traffic
 * of `footprint`, the peaks per dtype of the PE_GEMMs that ran (`gemmEngines`), the rates over
 * the window and the rooflines.
 */
export function launchDetail(
  window: LaunchWindow,
  before: LevelSnapshot,
  after: LevelSnapshot,
  footprint: HbmFootprint,
  gemmEngines: readonly Component[],
): LaunchDetail {
  const durationNs = window.endNs - window.startNs;
  const gemmFlopsByDtype: Record<string, number> = {};
  for (const [dtype, flops] of Object.entries(after.gemmFlopsByDtype)) {
    const done = flops - (before.gemmFlopsByDtype[dtype] ?? 0);
    if (done > 0) gemmFlopsByDtype[dtype] = done;
  }
  const peaksByDtype = gemmPeaksByDtype(gemmEngines, Object.keys(gemmFlopsByDtype));
  const bound = (work: number, perNs: number) => (work > 0 && perNs > 0 ? work / perNs : 0);
  let gemmNs = 0;
  for (const [dtype, flops] of Object.entries(gemmFlopsByDtype))
    gemmNs += bound(flops, peaksByDtype[dtype] ?? window.peaks.gemm);
  const hbmReadBytes = footprint.readBytes;
  const hbmWriteBytes = footprint.writeBytes;
  const minimalHbmBytes = hbmReadBytes + hbmWriteBytes;
  const terms = {
    gemm: bound(window.gemmFlops, window.peaks.gemm),
    math: bound(window.mathFlops, window.peaks.math),
    hbm: bound(window.hbmBytes, window.peaks.hbm),
  };
  // The same terms as rooflineNs (GEMM at the best dtype's rate), so the two rooflines compare.
  const minimalRooflineNs = Math.max(terms.gemm, terms.math, bound(minimalHbmBytes, window.peaks.hbm));
  const largest = window.rooflineNs;
  const boundBy =
    largest <= 0 ? "none" : terms.gemm === largest ? "gemm" : terms.math === largest ? "math" : "hbm";
  const per = (value: number) => (durationNs > 0 ? value / durationNs : 0);
  const dtypeRooflineNs = Math.max(gemmNs, terms.math, terms.hbm);
  const perS = (value: number) => per(value) * 1e9;
  const fabricLinkBytes = after.fabricLinkBytes - before.fabricLinkBytes;
  const byDtypePerS: Record<string, number> = {};
  for (const [dtype, perNs] of Object.entries(peaksByDtype)) byDtypePerS[dtype] = perNs * 1e9;
  return {
    durationNs,
    gemmFlopsByDtype,
    traffic: {
      hbmBytes: window.hbmBytes,
      dmaBytes: after.dmaBytes - before.dmaBytes,
      fabricLinkBytes,
      tcmBytes: after.tcmBytes - before.tcmBytes,
      fetchStoreBytes: after.fetchStoreBytes - before.fetchStoreBytes,
    },
    minimal: {
      hbmReadBytes,
      hbmWriteBytes,
      hbmBytes: minimalHbmBytes,
      rooflineNs: minimalRooflineNs,
      efficiency: per(minimalRooflineNs),
    },
    bounds: {
      gemmNs,
      mathNs: terms.math,
      hbmNs: terms.hbm,
      minimalHbmNs: bound(minimalHbmBytes, window.peaks.hbm),
    },
    boundBy,
    peak: {
      gemmFlopsPerS: window.peaks.gemm * 1e9,
      gemmFlopsPerSByDtype: byDtypePerS,
      mathFlopsPerS: window.peaks.math * 1e9,
      hbmBytesPerS: window.peaks.hbm * 1e9,
    },
    achieved: {
      gemmFlopsPerS: perS(window.gemmFlops),
      mathFlopsPerS: perS(window.mathFlops),
      hbmBytesPerS: perS(window.hbmBytes),
      fabricLinkBytesPerS: perS(fabricLinkBytes),
      gemmFraction: per(gemmNs),
      mathFraction: per(terms.math),
      hbmFraction: per(terms.hbm),
    },
    efficiency: per(window.rooflineNs),
    dtypeRooflineNs,
    dtypeEfficiency: per(dtypeRooflineNs),
  };
}
