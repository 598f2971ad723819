/**
 * The WebAssembly inner loops of `blocked-matmul.ts`, assembled here byte by byte (no toolchain,
 * no binary file): 128-bit SIMD on pairs of f64, `f64x2.mul` then `f64x2.add` (two roundings per
 * multiply-add, as JS's `c += a * b`; no fused multiply-add).
 *
 * Its memory is the caller's (imported as `env.memory`): the packed operands and C live there.
 * Functions (addresses and strides in bytes):
 * - `tile(a, b, kc, c, cRow)` (internal): the 4 x 4 tile of C at byte address `c` (rows `cRow`
 *   bytes apart) += the packed A strip at `a` (`[kc][4]` f64) @ the packed B panel slice at `b`
 *   (`[kc][4]`), its 16 sums in 8 `f64x2` locals (row r: columns 0-1 and 2-3), p = 0, 1, ...,
 *   kc - 1 in order;
 * - `block(a, b, c, strips, panels, kc, bPanel, cRow)` (exported): `tile` for every panel (B
 *   panels `bPanel` bytes apart, C columns 4 per panel) and, inside, every strip of 4 rows (A
 *   strips `kc * 32` bytes apart, C rows `4 * cRow` bytes apart).
 */

const I32 = 0x7f;
const V128 = 0x7b;
const [LOCAL_GET, LOCAL_SET] = [0x20, 0x21];
const [I32_CONST, I32_ADD, I32_MUL, I32_GE_U] = [0x41, 0x6a, 0x6c, 0x4f];
const [BLOCK, LOOP, BR, BR_IF, END, CALL, VOID] = [0x02, 0x03, 0x0c, 0x0d, 0x0b, 0x10, 0x40];
const SIMD = 0xfd;
const [V128_LOAD, V128_LOAD64_SPLAT, V128_STORE, F64X2_ADD, F64X2_MUL] = [0x00, 0x0a, 0x0b, 0xf0, 0xf2];

/** Unsigned LEB128. */
function u32(value: number): number[] {
  const bytes: number[] = [];
  let rest = value >>> 0;
  do {
    const byte = rest & 0x7f;
    rest >>>= 7;
    bytes.push(rest === 0 ? byte : byte | 0x80);
  } while (rest !== 0);
  return bytes;
}

/** Signed LEB128 of a small non-negative constant (below 2^31). */
function i32(value: number): number[] {
  const bytes = u32(value);
  // A set sign bit (0x40) in the last byte would read as negative: add a zero byte.
  if (((bytes.at(-1) as number) & 0x40) !== 0) {
    bytes[bytes.length - 1] = (bytes.at(-1) as number) | 0x80;
    bytes.push(0);
  }
  return bytes;
}

const get = (local: number) => [LOCAL_GET, ...u32(local)];
const set = (local: number) => [LOCAL_SET, ...u32(local)];
const simd = (op: number, ...immediates: number[]) => [SIMD, ...u32(op), ...immediates];
/** `v128.load` / `v128.store` / `v128.load64_splat` at `offset` bytes past the address on the stack. */
const memory = (op: number, offset: number, alignLog2: number) => simd(op, alignLog2, ...u32(offset));
const vector = (bytes: number[]) => [...u32(bytes.length), ...bytes];
const section = (id: number, bytes: number[]) => [id, ...u32(bytes.length), ...bytes];
const name = (text: string) => vector([...text].map((char) => char.charCodeAt(0)));

/**
 * `tile`: params a, b, kc, c, cRow (locals 0-4); then end (5), acc[r][v] (6 + 2r + v), bv0 (14),
 * bv1 (15), av (16).
 */
function tileBody(): number[] {
  const [a, b, kc, c, cRow, end] = [0, 1, 2, 3, 4, 5];
  const acc = (row: number, half: number) => 6 + 2 * row + half;
  const [bv0, bv1, av] = [14, 15, 16];
  const code: number[] = [];
  // The address of row r of the tile: c + r * cRow.
  const rowAddress = (row: number) =>
    row === 0 ? get(c) : [...get(c), ...get(cRow), I32_CONST, ...i32(row), I32_MUL, I32_ADD];
  for (let row = 0; row < 4; row++) {
    for (let half = 0; half < 2; half++) {
      code.push(...rowAddress(row), ...memory(V128_LOAD, 16 * half, 3), ...set(acc(row, half)));
    }
  }
  code.push(...get(a), ...get(kc), I32_CONST, ...i32(32), I32_MUL, I32_ADD, ...set(end));
  code.push(BLOCK, VOID, LOOP, VOID);
  code.push(...get(a), ...get(end), I32_GE_U, BR_IF, 1);
  code.push(...get(b), ...memory(V128_LOAD, 0, 3), ...set(bv0));
  code.push(...get(b), ...memory(V128_LOAD, 16, 3), ...set(bv1));
  for (let row = 0; row < 4; row++) {
    code.push(...get(a), ...memory(V128_LOAD64_SPLAT, 8 * row, 3), ...set(av));
    for (let half = 0; half < 2; half++) {
      code.push(
        ...get(acc(row, half)),
        ...get(av),
        ...get(half === 0 ? bv0 : bv1),
        ...simd(F64X2_MUL),
        ...simd(F64X2_ADD),
        ...set(acc(row, half)),
      );
    }
  }
  code.push(...get(a), I32_CONST, ...i32(32), I32_ADD, ...set(a));
  code.push(...get(b), I32_CONST, ...i32(32), I32_ADD, ...set(b));
  code.push(BR, 0, END, END);
  for (let row = 0; row < 4; row++) {
    for (let half = 0; half < 2; half++) {
      code.push(...rowAddress(row), ...get(acc(row, half)), ...memory(V128_STORE, 16 * half, 3));
    }
  }
  code.push(END);
  const locals = [...u32(2), ...u32(1), I32, ...u32(11), V128];
  return vector([...locals, ...code]);
}

/** `block`: params a, b, c, strips, panels, kc, bPanel, cRow (0-7); locals panel (8), strip (9). */
function blockBody(): number[] {
  const [a, b, c, strips, panels, kc, bPanel, cRow, panel, strip] = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9];
  const code: number[] = [];
  code.push(I32_CONST, 0, ...set(panel));
  code.push(BLOCK, VOID, LOOP, VOID);
  code.push(...get(panel), ...get(panels), I32_GE_U, BR_IF, 1);
  code.push(I32_CONST, 0, ...set(strip));
  code.push(BLOCK, VOID, LOOP, VOID);
  code.push(...get(strip), ...get(strips), I32_GE_U, BR_IF, 1);
  // tile(a + strip * kc * 32, b + panel * bPanel, kc, c + strip * 4 * cRow + panel * 32, cRow)
  code.push(...get(a), ...get(strip), ...get(kc), I32_MUL, I32_CONST, ...i32(32), I32_MUL, I32_ADD);
  code.push(...get(b), ...get(panel), ...get(bPanel), I32_MUL, I32_ADD);
  code.push(...get(kc));
  code.push(...get(c), ...get(strip), ...get(cRow), I32_MUL, I32_CONST, ...i32(4), I32_MUL, I32_ADD);
  code.push(...get(panel), I32_CONST, ...i32(32), I32_MUL, I32_ADD);
  code.push(...get(cRow), CALL, 0);
  code.push(...get(strip), I32_CONST, 1, I32_ADD, ...set(strip), BR, 0, END, END);
  code.push(...get(panel), I32_CONST, 1, I32_ADD, ...set(panel), BR, 0, END, END);
  code.push(END);
  const locals = [...u32(1), ...u32(2), I32];
  return vector([...locals, ...code]);
}

/** The module's bytes. */
function moduleBytes(): Uint8Array<ArrayBuffer> {
  const funcType = (params: number) => [0x60, ...vector(new Array<number>(params).fill(I32)), 0];
  const types = section(1, [...u32(2), ...funcType(5), ...funcType(8)]);
  const imports = section(2, [...u32(1), ...name("env"), ...name("memory"), 0x02, 0x00, 0]);
  const functions = section(3, [...u32(2), 0, 1]);
  const exports = section(7, [...u32(1), ...name("block"), 0x00, 1]);
  const code = section(10, [...u32(2), ...tileBody(), ...blockBody()]);
  return new Uint8Array([
    0x00,
    0x61,
    0x73,
    0x6d,
    0x01,
    0x00,
    0x00,
    0x00,
    ...types,
    ...imports,
    ...functions,
    ...exports,
    ...code,
  ]);
}

/** The exports of an instance over one memory. */
export interface KernelInstance {
  /** See the file's comment. Addresses and strides in bytes. */
  readonly block: (
    a: number,
    b: number,
    c: number,
    strips: number,
    panels: number,
    kc: number,
    bPanel: number,
    cRow: number,
  ) => void;
}

let compiled: WebAssembly.Module | null = null;

/** An instance of the kernel over `memory` (the module is compiled once). */
export function instantiateKernel(memory: WebAssembly.Memory): KernelInstance {
  compiled ??= new WebAssembly.Module(moduleBytes());
  const instance = new WebAssembly.Instance(compiled, { env: { memory } });
  return instance.exports as unknown as KernelInstance;
}
