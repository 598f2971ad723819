/**
 * The device address layout, low bit first: `offset` bits [0, 40), `space` bits [40, 42)
 * (hbm = 0, tcm = 1, sram = 2; 3 is not a space), `cube` bits [42, 48), `sip` bits [48, 53).
 * 53 bits in all, so every address is an exact JavaScript number (at most 2^53 - 1).
 */
export const ADDRESS_LAYOUT = Object.freeze({
  offsetBits: 40,
  spaceShift: 40,
  spaceBits: 2,
  cubeShift: 42,
  cubeBits: 6,
  sipShift: 48,
  sipBits: 5,
});

/**
 * Each PE's window in its cube's TCM address space: 256 MiB (so up to 4096 PEs per cube). PE `p`'s
 * TCM byte `x` is TCM offset `p * TCM_WINDOW_BYTES + x` of its cube.
 */
export const TCM_WINDOW_BYTES = 2 ** 28;
