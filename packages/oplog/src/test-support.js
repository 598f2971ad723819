/** A valid `dma_read` params object (test helper). */
export function memoryParams(src = 0, nbytes = 4096) {
    return { src_addr: src, dst_addr: 0x100_0000_0000, nbytes, src_space: "hbm", dst_space: "tcm" };
}
/** A valid 128x256 @ 256x128 f16 GEMM params object (test helper). */
export function gemmParams(dst = 0) {
    return {
        src_a_addr: 0,
        src_b_addr: 65536,
        dst_addr: dst,
        shape_a: [128, 256],
        shape_b: [256, 128],
        shape_out: [128, 128],
        dtype_in: "f16",
        dtype_acc: "f32",
        dtype_out: "f16",
        transpose_a: false,
        transpose_b: false,
        layout_a: "row_major",
        layout_b: "row_major",
        layout_out: "row_major",
        addr_space: "tcm",
    };
}
/** A valid row-sum math params object (test helper). */
export function mathParams() {
    return {
        op: "sum",
        input_addrs: [0],
        input_shapes: [[128, 128]],
        dst_addr: 32768,
        shape_out: [128],
        dtype: "f32",
        axis: 1,
        addr_space: "tcm",
    };
}
//# sourceMappingURL=test-support.js.map