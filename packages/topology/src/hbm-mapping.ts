import { KbError } from "@kb/errors";
import type { HbmAddressMap, HbmCoordinates, HbmOrganisation } from "@kb/spec";
import { hbmCoordinatesScratch } from "@kb/spec";

// The interfaces are the contract a memory model reads (@kb/spec); the mappings are built here.
export type { HbmAddressMap, HbmCoordinates, HbmOrganisation } from "@kb/spec";

/** The mapping names besides bit-order strings. */
export const HBM_MAPPINGS = Object.freeze(["interleave", "xor", "mop4clxor"] as const);

/**
 * Builds the address mapping `mapping` of a stack organised as `organisation`:
 *
 * - `interleave`: units of `interleaveBytes` over channels first, then pseudo-channels (unit
 *   `u = floor(offset / interleave)`, channel `u mod channels`, pseudo-channel
 *   `floor(u / channels) mod pseudoChannels`); within a pseudo-channel its bytes are contiguous,
 *   laid out row | bank | bank group | SID | column (MSB first).
 * - `mop4clxor`: Ramulator 2's `MOP4CLXOR` mapper. Channel bits sit right above the 64 B line
 *   (A[c0, c0 + ch) with c0 = log2(2 x burst)); the remaining bits, in bursts from the bottom, are
 *   column bits 0-1, pseudo-channel, SID, bank group, bank, the upper column bits, then the row;
 *   then pseudo-channel, SID, bank-group and bank bits are each XORed with consecutive column bits
 *   (column bit 0 first). The two bursts of a 64 B line land in different pseudo-channels.
 * - `xor`: `mop4clxor`, plus every channel bit XOR-folded with the address bits above the
 *   channel field taken `ch` at a time (channel ^= A[c0+ch, c0+2ch) ^ A[c0+2ch, c0+3ch) ^ ...),
 *   the pseudo-channel bit XORed with the parity of the row, and the bank-group and bank bits
 *   XORed with the row's low bits (permutation-based interleaving): power-of-two strides spread
 *   over every channel and bank.
 * - A bit-order string, MSB first, in the style of Ramulator (`RoBaRaCoCh`): fields `Ro` (row),
 *   `Ba` (bank; with no `Bg` it also holds the bank-group bits, below the bank bits), `Bg`,
 *   `Si` or `Ra` (SID), `Pc`, `Co` (column), `Ch`; a field may be split with explicit widths,
 *   such as `RoBaBgSiPcCo4ChCo1` (the low column bit below the channel: 64 B channel interleave).
 *   The bits below the fields are the byte within a burst; `Ro` takes every bit above the
 *   others wherever it is written.
 *
 * Throws `TOPOLOGY_INVALID` when the mapping is unknown, a string names a field twice without
 * widths, misses a field the organisation needs, or a count is not a power of two.
 */
export function hbmAddressMap(organisation: HbmOrganisation, mapping: string): HbmAddressMap {
  if (mapping === "interleave") return new InterleaveMap(organisation);
  const widths = fieldWidths(organisation, mapping);
  if (mapping === "mop4clxor" || mapping === "xor") {
    return new BitLayoutMap(organisation, mapping, mop4Layout(widths, mapping === "xor"));
  }
  return new BitLayoutMap(organisation, mapping, parseBitOrder(mapping, widths));
}

// ---------------------------------------------------------------------------------------------

type Field = "Ch" | "Pc" | "Si" | "Bg" | "Ba" | "Co" | "Ro";

const FIELD_WORDS: Record<Field, string> = {
  Ch: "channel",
  Pc: "pseudo-channel",
  Si: "SID",
  Bg: "bank group",
  Ba: "bank",
  Co: "column",
  Ro: "row",
};

interface Widths {
  readonly burst: number;
  readonly Ch: number;
  readonly Pc: number;
  readonly Si: number;
  readonly Bg: number;
  readonly Ba: number;
  readonly Co: number;
}

function log2Exact(value: number, what: string, mapping: string): number {
  const bits = Math.log2(value);
  if (!Number.isInteger(bits) || value < 1) {
    throw new KbError(
      "TOPOLOGY_INVALID",
      `cube.hbm.mapping "${mapping}" lays addresses out bit by bit, so ${what} must be a power of two, got ${value}. Use mapping: interleave for other counts.`,
    );
  }
  return bits;
}

function fieldWidths(o: HbmOrganisation, mapping: string): Widths {
  if (o.rowBytes % o.burstBytes !== 0) {
    throw new KbError(
      "TOPOLOGY_INVALID",
      `cube.hbm.row_bytes (${o.rowBytes}) must be a multiple of burst_bytes (${o.burstBytes}).`,
    );
  }
  return {
    burst: log2Exact(o.burstBytes, "burst_bytes", mapping),
    Ch: log2Exact(o.channels, "channels", mapping),
    Pc: log2Exact(o.pseudoChannels, "pseudo_channels", mapping),
    Si: log2Exact(o.sids, "sids", mapping),
    Bg: log2Exact(o.bankGroups, "bank_groups", mapping),
    Ba: log2Exact(o.banksPerGroup, "banks_per_group", mapping),
    Co: log2Exact(o.rowBytes / o.burstBytes, "row_bytes / burst_bytes", mapping),
  };
}

/** One output bit of a field: the address bit it comes from, XORed with more address bits. */
interface BitSource {
  readonly bit: number;
  readonly xor: readonly number[];
}

/** A bit layout: for each field, its bits low to high; the row is every bit from `rowShift` up. */
interface Layout {
  readonly fields: Record<Exclude<Field, "Ro">, BitSource[]>;
  readonly rowShift: number;
  /** XOR sources that take the row's bits: field bit -> row bit indices (folds of the row). */
  readonly rowXor: Partial<Record<Exclude<Field, "Ro" | "Co">, number[][]>>;
  /** Layout in words (MSB first). */
  readonly text: string;
}

const emptyFields = (): Layout["fields"] => ({ Ch: [], Pc: [], Si: [], Bg: [], Ba: [], Co: [] });

function mop4Layout(w: Widths, fold: boolean): Layout {
  const fields = emptyFields();
  let bit = w.burst;
  // Column bit 0 is the burst within the 64 B line; the channel sits right above the line.
  const col0 = bit++;
  for (let i = 0; i < w.Ch; i++) fields.Ch.push({ bit: bit++, xor: [] });
  const column: number[] = [col0];
  if (w.Co > 1) column.push(bit++);
  const take = (field: Exclude<Field, "Ro" | "Co">, count: number): void => {
    for (let i = 0; i < count; i++) fields[field].push({ bit: bit++, xor: [] });
  };
  take("Pc", w.Pc);
  take("Si", w.Si);
  take("Bg", w.Bg);
  take("Ba", w.Ba);
  while (column.length < w.Co) column.push(bit++);
  for (const c of column) fields.Co.push({ bit: c, xor: [] });
  const rowShift = bit;
  // XOR pseudo-channel, SID, bank group and bank bits in turn with consecutive column bits.
  let next = 0;
  for (const field of ["Pc", "Si", "Bg", "Ba"] as const) {
    fields[field] = fields[field].map((source) =>
      next < column.length ? { bit: source.bit, xor: [column[next++] as number] } : source,
    );
  }
  const rowXor: Layout["rowXor"] = {};
  if (fold && w.Ch > 0) {
    // Each channel bit i also takes bit i of every ch-bit chunk above the channel field.
    const chunkStart = (fields.Ch[w.Ch - 1]?.bit ?? col0) + 1;
    fields.Ch = fields.Ch.map((source, i) => {
      const xor: number[] = [];
      for (let b = chunkStart + i; b < rowShift; b += w.Ch) xor.push(b);
      return { bit: source.bit, xor };
    });
    // ... and of every ch-bit chunk of the row (handled with the row value, any width).
    rowXor.Ch = fields.Ch.map((_, i) => [i]);
  }
  if (fold) {
    rowXor.Pc = fields.Pc.map(() => [-1]); // -1: parity of the whole row
    let r = 0;
    rowXor.Bg = fields.Bg.map(() => [r++]);
    rowXor.Ba = fields.Ba.map(() => [r++]);
  }
  const text = fold
    ? "xor: mop4clxor with channel ^= fold(address bits above the channel, row), pseudo-channel ^= parity(row), bank group / bank ^= low row bits"
    : "mop4clxor (Ramulator MOP4CLXOR)";
  return { fields, rowShift, rowXor, text };
}

const TOKEN = /(Ro|Ba|Bg|Si|Ra|Pc|Co|Ch)(\d+)?/y;

function parseBitOrder(mapping: string, w: Widths): Layout {
  const compact = mapping.replace(/[-_\s]/g, "");
  const tokens: { field: Field; width: number | null }[] = [];
  TOKEN.lastIndex = 0;
  while (TOKEN.lastIndex < compact.length) {
    const at = TOKEN.lastIndex;
    const match = TOKEN.exec(compact);
    if (match === null) {
      throw new KbError(
        "TOPOLOGY_INVALID",
        `cube.hbm.mapping "${mapping}": cannot read "${compact.slice(at)}"; expected interleave, xor, mop4clxor or a bit-order string of Ro, Ba, Bg, Si (or Ra), Pc, Co, Ch, MSB first, each optionally with a width (RoBaBgSiPcCo4ChCo1).`,
      );
    }
    const name = match[1] === "Ra" ? "Si" : (match[1] as Field);
    tokens.push({ field: name, width: match[2] === undefined ? null : Number(match[2]) });
  }
  const has = (field: Field): boolean => tokens.some((token) => token.field === field);
  // Ba without Bg holds the bank-group bits too (below the bank bits).
  const total: Record<Field, number> = { ...w, Ba: has("Bg") ? w.Ba : w.Ba + w.Bg, Bg: w.Bg, Ro: 0 };
  const fields = emptyFields();
  const widthOf = new Map<Field, number>();
  for (const token of tokens) {
    if (token.field === "Ro") continue;
    if (token.width === null && tokens.filter((t) => t.field === token.field).length > 1) {
      throw new KbError(
        "TOPOLOGY_INVALID",
        `cube.hbm.mapping "${mapping}": ${token.field} appears more than once; give each part a width (Co4 ... Co1).`,
      );
    }
    widthOf.set(token.field, (widthOf.get(token.field) ?? 0) + (token.width ?? total[token.field]));
  }
  for (const field of ["Ch", "Pc", "Si", "Bg", "Ba", "Co"] as const) {
    const need = field === "Bg" && !has("Bg") ? 0 : total[field];
    const got = widthOf.get(field) ?? 0;
    if (got !== need) {
      throw new KbError(
        "TOPOLOGY_INVALID",
        `cube.hbm.mapping "${mapping}": ${FIELD_WORDS[field]} (${field}) has ${got} bit(s), the organisation needs ${need}${got === 0 ? `: add ${field}` : ""}.`,
      );
    }
  }
  // Assign from the LSB: the rightmost token first; a split field fills its low bits first.
  let bit = w.burst;
  const bankBits: number[] = [];
  for (let i = tokens.length - 1; i >= 0; i--) {
    const token = tokens[i] as { field: Field; width: number | null };
    if (token.field === "Ro") continue;
    const count = token.width ?? total[token.field];
    for (let k = 0; k < count; k++) {
      if (token.field === "Ba") bankBits.push(bit++);
      else fields[token.field].push({ bit: bit++, xor: [] });
    }
  }
  // Ba without Bg: its low bits are the bank group.
  const bgInBa = has("Bg") ? 0 : w.Bg;
  for (let k = 0; k < bankBits.length; k++) {
    (k < bgInBa ? fields.Bg : fields.Ba).push({ bit: bankBits[k] as number, xor: [] });
  }
  return { fields, rowShift: bit, rowXor: {}, text: `bit order ${mapping} (MSB first)` };
}

// ---------------------------------------------------------------------------------------------

const TWO32 = 2 ** 32;

/** Bit `b` of a non-negative integer below 2^53, without 32-bit overflow. */
function bitOf(lo: number, hi: number, b: number): number {
  return b < 32 ? (lo >>> b) & 1 : (hi >>> (b - 32)) & 1;
}

function parity(value: number): number {
  let p = 0;
  let v = value;
  while (v > 0) {
    const lo = v % TWO32;
    let x = lo ^ (lo >>> 16);
    x ^= x >>> 8;
    x ^= x >>> 4;
    x ^= x >>> 2;
    x ^= x >>> 1;
    p ^= x & 1;
    v = Math.floor(v / TWO32);
  }
  return p;
}

class BitLayoutMap implements HbmAddressMap {
  readonly lanes: number;
  readonly granuleBytes: number;
  readonly periodBytes: number;
  private readonly fields: Layout["fields"];
  private readonly rowShift: number;
  private readonly rowUnit: number;
  private readonly rowXor: Layout["rowXor"];
  private readonly text: string;
  private readonly scratch: HbmCoordinates = hbmCoordinatesScratch();

  constructor(
    readonly organisation: HbmOrganisation,
    readonly name: string,
    layout: Layout,
  ) {
    this.lanes = organisation.channels * organisation.pseudoChannels;
    this.fields = layout.fields;
    this.rowShift = layout.rowShift;
    this.rowUnit = 2 ** layout.rowShift;
    this.rowXor = layout.rowXor;
    this.text = layout.text;
    // Every bit that moves a byte to another lane ends a granule (row folds sit above them all).
    const deciding = (["Ch", "Pc"] as const).flatMap((f) => this.fields[f].flatMap((s) => [s.bit, ...s.xor]));
    this.granuleBytes = 2 ** Math.min(...deciding, layout.rowShift);
    const laneRaw = [...this.fields.Ch, ...this.fields.Pc].map((s) => s.bit);
    // Lane bits are raw bits XOR other bits: every aligned block over the raw bits is uniform.
    this.periodBytes = laneRaw.length === 0 ? this.granuleBytes : 2 ** (Math.max(...laneRaw) + 1);
  }

  private field(sources: readonly BitSource[], lo: number, hi: number): number {
    let value = 0;
    for (let i = 0; i < sources.length; i++) {
      const source = sources[i] as BitSource;
      let b = bitOf(lo, hi, source.bit);
      for (const x of source.xor) b ^= bitOf(lo, hi, x);
      value |= b << i;
    }
    return value;
  }

  /** The bits of `row` a field of `width` bits is XORed with (`folds`: per field bit, its row bits). */
  private rowMask(row: number, folds: number[][] | undefined, width: number): number {
    if (folds === undefined || width === 0) return 0;
    let out = 0;
    for (let i = 0; i < folds.length; i++) {
      const spec = folds[i] as number[];
      let b = 0;
      if (spec[0] === -1) b = parity(row);
      else if (folds === this.rowXor.Ch) {
        // Bit i of every width-bit chunk of the row.
        for (let v = Math.floor(row / 2 ** (spec[0] as number)); v > 0; v = Math.floor(v / 2 ** width)) {
          b ^= v % 2;
        }
      } else b = Math.floor(row / 2 ** (spec[0] as number)) % 2;
      out ^= b << i;
    }
    return out;
  }

  /**
   * The lane is linear over GF(2) in the address bits: lane(offset) = L(offset mod 2^rowShift)
   * XOR R(row). L is read from one table per 8 bits (built once), R is cached for the last row.
   */
  private laneTables: Int32Array[] | null = null;
  // The last located row and its fields' XOR masks (a field XORs bits of the row alone).
  private foldRow = -1;
  private foldCh = 0;
  private foldPc = 0;
  private foldBg = 0;
  private foldBa = 0;
  private lastRow = -1;
  private lastRowLane = 0;

  private slowLane(offset: number): number {
    const c = this.locate(offset, this.scratch);
    return c.channel * this.organisation.pseudoChannels + c.pseudoChannel;
  }

  lane(offset: number): number {
    if (this.rowShift > 32) return this.slowLane(offset);
    let tables = this.laneTables;
    if (tables === null) {
      tables = [];
      for (let shift = 0; shift < this.rowShift; shift += 8) {
        const table = new Int32Array(256);
        for (let v = 0; v < 256; v++) {
          const at = v * 2 ** shift;
          table[v] = at < this.rowUnit ? this.slowLane(at) : 0;
        }
        tables.push(table);
      }
      this.laneTables = tables;
    }
    const row = Math.floor(offset / this.rowUnit);
    if (row !== this.lastRow) {
      this.lastRow = row;
      this.lastRowLane = row === 0 ? 0 : this.slowLane(row * this.rowUnit);
    }
    const low = offset - row * this.rowUnit;
    let lane = this.lastRowLane;
    for (let i = 0; i < tables.length; i++)
      lane ^= (tables[i] as Int32Array)[(low >>> (8 * i)) & 255] as number;
    return lane;
  }

  locate(offset: number, out?: HbmCoordinates): HbmCoordinates {
    const lo = (offset % TWO32) >>> 0;
    const hi = Math.floor(offset / TWO32);
    const row = Math.floor(offset / this.rowUnit);
    const f = this.fields;
    if (row !== this.foldRow) {
      // The row's bits XORed into a field depend on the row alone: fold them once a row.
      const x = this.rowXor;
      this.foldRow = row;
      this.foldCh = this.rowMask(row, x.Ch, f.Ch.length);
      this.foldPc = this.rowMask(row, x.Pc, f.Pc.length);
      this.foldBg = this.rowMask(row, x.Bg, f.Bg.length);
      this.foldBa = this.rowMask(row, x.Ba, f.Ba.length);
    }
    const target = out ?? { ...this.scratch };
    target.channel = this.field(f.Ch, lo, hi) ^ this.foldCh;
    target.pseudoChannel = this.field(f.Pc, lo, hi) ^ this.foldPc;
    target.sid = this.field(f.Si, lo, hi);
    target.bankGroup = this.field(f.Bg, lo, hi) ^ this.foldBg;
    target.bank = this.field(f.Ba, lo, hi) ^ this.foldBa;
    target.column = this.field(f.Co, lo, hi);
    target.row = row;
    return target;
  }

  describe(): string {
    const f = this.fields;
    const bits = (sources: readonly BitSource[]): string =>
      sources
        .map((s) => `A${s.bit}${s.xor.length > 0 ? `^A${s.xor.join("^A")}` : ""}`)
        .reverse()
        .join(" ");
    const parts = [
      `row A[${this.rowShift}+]`,
      `bank ${bits(f.Ba) || "-"}`,
      `bank group ${bits(f.Bg) || "-"}`,
      `SID ${bits(f.Si) || "-"}`,
      `pseudo-channel ${bits(f.Pc) || "-"}`,
      `column ${bits(f.Co) || "-"}`,
      `channel ${bits(f.Ch) || "-"}`,
    ];
    return `${this.text}: ${parts.join(" | ")}`;
  }
}

class InterleaveMap implements HbmAddressMap {
  readonly name = "interleave";
  readonly lanes: number;
  readonly granuleBytes: number;
  readonly periodBytes: number;
  private readonly scratch: HbmCoordinates = hbmCoordinatesScratch();

  constructor(readonly organisation: HbmOrganisation) {
    const o = organisation;
    this.lanes = o.channels * o.pseudoChannels;
    this.granuleBytes = o.interleaveBytes;
    this.periodBytes = this.lanes * o.interleaveBytes;
  }

  lane(offset: number): number {
    const o = this.organisation;
    const unit = Math.floor(offset / o.interleaveBytes);
    return (unit % o.channels) * o.pseudoChannels + (Math.floor(unit / o.channels) % o.pseudoChannels);
  }

  locate(offset: number, out?: HbmCoordinates): HbmCoordinates {
    const o = this.organisation;
    const target = out ?? { ...this.scratch };
    const unit = Math.floor(offset / o.interleaveBytes);
    target.channel = unit % o.channels;
    target.pseudoChannel = Math.floor(unit / o.channels) % o.pseudoChannels;
    // The pseudo-channel's own bytes are contiguous: row | bank | bank group | SID | column.
    const local = Math.floor(unit / this.lanes) * o.interleaveBytes + (offset % o.interleaveBytes);
    const columns = o.rowBytes / o.burstBytes;
    let rest = Math.floor(local / o.burstBytes);
    target.column = rest % columns;
    rest = Math.floor(rest / columns);
    target.sid = rest % o.sids;
    rest = Math.floor(rest / o.sids);
    target.bankGroup = rest % o.bankGroups;
    rest = Math.floor(rest / o.bankGroups);
    target.bank = rest % o.banksPerGroup;
    target.row = Math.floor(rest / o.banksPerGroup);
    return target;
  }

  describe(): string {
    const o = this.organisation;
    return `interleave: ${o.interleaveBytes} B units over ${o.channels} channels, then ${o.pseudoChannels} pseudo-channels; within a pseudo-channel row | bank | bank group | SID | column`;
  }
}
