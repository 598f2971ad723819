import { TCM_WINDOW_BYTES, tcmAddress } from "@kb/components";
import { decodeAddress, encodeAddress } from "@kb/topology";
import { describe, expect, it } from "vitest";
import { thrown } from "../test-support.js";
import { DeviceMemory } from "./device-memory.js";

const MIB = 2 ** 20;

describe("DeviceMemory", () => {
  const layout = {
    sips: 2,
    cubesPerSip: 4,
    pesPerCube: 8,
    hbmBytesPerCube: 64 * MIB,
    sramBytesPerCube: 4 * MIB,
    tcmBytesPerPe: 4 * MIB,
  };
  const page = 2 * MIB;

  it("usedBytes answers one memory's use, as stats() does, and 0 where nothing was allocated", () => {
    const memory = new DeviceMemory(layout);
    memory.allocHbm(3 * MIB, { sip: 1, cube: 2 });
    // HBM is allocated in whole 2 MiB pages: 3 MiB takes two.
    expect(memory.usedBytes("hbm", 1, 2)).toBe(2 * page);
    expect(memory.usedBytes("hbm", 0, 0)).toBe(0);
    expect(memory.usedBytes("tcm", 1, 2, 3)).toBe(0);
    const entry = memory.stats().find((stats) => stats.name === "sip1.cube2.hbm");
    expect(entry?.used).toBe(memory.usedBytes("hbm", 1, 2));
  });

  it("allocates HBM in whole 2 MiB pages", () => {
    const memory = new DeviceMemory(layout);
    const base = encodeAddress({ sip: 1, cube: 2, space: "hbm", offset: 0 });
    expect(memory.allocHbm(1, { sip: 1, cube: 2 })).toBe(base); // page 0
    expect(memory.allocHbm(3 * MIB, { sip: 1, cube: 2 })).toBe(base + page); // page 1, occupies pages 1 and 2
    expect(memory.allocHbm(1, { sip: 1, cube: 2 })).toBe(base + 3 * page); // page 3
    expect(memory.allocHbm(1, { sip: 0, cube: 0 })).toBe(0); // another cube has its own allocator
    const stats = memory.stats();
    expect(stats.map((entry) => entry.name)).toEqual(["sip0.cube0.hbm", "sip1.cube2.hbm"]);
    expect(stats[1]).toMatchObject({
      space: "hbm",
      sip: 1,
      cube: 2,
      pe: null,
      base,
      size: 64 * MIB,
      used: 4 * page,
      free: 56 * MIB,
      allocations: 3,
    });
  });

  it("honours a custom page size", () => {
    const memory = new DeviceMemory({ ...layout, pageBytes: 4096 });
    expect(memory.allocHbm(1, { sip: 0, cube: 1 })).toBe(
      encodeAddress({ sip: 0, cube: 1, space: "hbm", offset: 0 }),
    );
    expect(memory.allocHbm(4097, { sip: 0, cube: 1 })).toBe(
      encodeAddress({ sip: 0, cube: 1, space: "hbm", offset: 4096 }),
    );
    expect(decodeAddress(memory.allocHbm(1, { sip: 0, cube: 1 })).offset).toBe(3 * 4096);
  });

  it("allocates TCM after the reserved bytes, 16-byte aligned, per PE", () => {
    const memory = new DeviceMemory(layout);
    const first = memory.allocTcm(10, { sip: 0, cube: 3, pe: 5 });
    expect(first).toBe(tcmAddress(0, 3, 5, MIB));
    expect(first).toBe(encodeAddress({ sip: 0, cube: 3, space: "tcm", offset: 5 * TCM_WINDOW_BYTES + MIB }));
    expect(memory.allocTcm(1, { sip: 0, cube: 3, pe: 5 })).toBe(tcmAddress(0, 3, 5, MIB + 16));
    expect(memory.allocTcm(1, { sip: 0, cube: 3, pe: 6 })).toBe(tcmAddress(0, 3, 6, MIB));
    const custom = new DeviceMemory({ ...layout, tcmReservedBytes: 100 });
    expect(custom.allocTcm(1, { sip: 0, cube: 0, pe: 0 })).toBe(tcmAddress(0, 0, 0, 112));
    // 3 MiB allocatable per PE with the default reserve
    expect(memory.allocTcm(3 * MIB, { sip: 1, cube: 0, pe: 0 })).toBe(tcmAddress(1, 0, 0, MIB));
    const full = thrown(() => memory.allocTcm(16, { sip: 1, cube: 0, pe: 0 }, "tile"));
    expect(full.code).toBe("MEMORY_ALLOCATION");
    expect(full.message).toContain('sip1.cube0.pe0.tcm: cannot allocate 16 bytes for "tile"');
    expect(full.message).toContain("reserved for the PE scheduler's tile buffers");
  });

  it("allocates SRAM 64-byte aligned", () => {
    const memory = new DeviceMemory(layout);
    const base = encodeAddress({ sip: 0, cube: 1, space: "sram", offset: 0 });
    expect(memory.allocSram(1, { sip: 0, cube: 1 })).toBe(base);
    expect(memory.allocSram(65, { sip: 0, cube: 1 })).toBe(base + 64);
    expect(memory.allocSram(1, { sip: 0, cube: 1 })).toBe(base + 192);
  });

  it("frees and checks accesses by decoding the address", () => {
    const memory = new DeviceMemory(layout);
    const hbm = memory.allocHbm(1000, { sip: 0, cube: 1 }, "x");
    const tcm = memory.allocTcm(256, { sip: 0, cube: 1, pe: 2 }, "tile");
    const sram = memory.allocSram(128, { sip: 0, cube: 1 });
    memory.checkAccess(hbm, 1000, "host write of x");
    memory.checkAccess(tcm + 128, 128, "GEMM read");
    memory.checkAccess(sram, 128, "copy");
    expect(memory.allocationAt(tcm + 4)).toEqual({
      start: tcm,
      bytes: 256,
      reservedBytes: 256,
      what: "tile",
    });
    expect(memory.allocationAt(tcm + 256)).toBeNull();
    const past = thrown(() => memory.checkAccess(hbm, 1001, "host write of x"));
    expect(past.code).toBe("MEMORY_ACCESS");
    expect(past.message).toContain("sip0.cube1.hbm");
    expect(past.message).toContain("runs 1 bytes past its end");
    memory.free(tcm);
    memory.free(hbm);
    memory.free(sram);
    expect(thrown(() => memory.free(hbm)).message).toContain("double free");
    expect(memory.allocHbm(1, { sip: 0, cube: 1 })).toBe(hbm);
    expect(memory.stats().every((entry) => entry.allocations === (entry.space === "hbm" ? 1 : 0))).toBe(true);
  });

  it("names the address when it belongs to no allocator", () => {
    const memory = new DeviceMemory(layout);
    const noCube = encodeAddress({ sip: 0, cube: 5, space: "hbm", offset: 0 });
    const error = thrown(() => memory.free(noCube));
    expect(error.code).toBe("MEMORY_ALLOCATION");
    expect(error.message).toBe(
      "[MEMORY_ALLOCATION] cannot free: 0x140000000000 (sip 0, cube 5, hbm offset 0x0) belongs to no memory of this device: cube 5 does not exist: each SIP has 4 cubes (0..3).",
    );
    const noPe = tcmAddress(0, 0, 8, MIB);
    expect(thrown(() => memory.checkAccess(noPe, 4, "read")).message).toContain("PE 8 does not exist");
    const reserved = tcmAddress(0, 0, 1, 64);
    const inReserve = thrown(() => memory.checkAccess(reserved, 4, "read"));
    expect(inReserve.code).toBe("MEMORY_ACCESS");
    expect(inReserve.message).toContain("reserved for the PE scheduler's tile buffers");
    const beyond = encodeAddress({ sip: 0, cube: 0, space: "hbm", offset: 64 * MIB });
    expect(thrown(() => memory.free(beyond)).message).toContain("beyond the cube's 67108864 bytes of HBM");
    expect(thrown(() => memory.free(2 ** 53)).message).toContain("is not a device address");
    const badSpace = 3 * 2 ** 40;
    expect(thrown(() => memory.free(badSpace)).message).toContain("space bits name no memory");
    const untouched = encodeAddress({ sip: 1, cube: 3, space: "sram", offset: 0 });
    expect(thrown(() => memory.free(untouched)).message).toContain(
      "nothing has been allocated in sip1.cube3.sram",
    );
    expect(thrown(() => memory.checkAccess(untouched, 4, "read")).message).toContain(
      "nothing has been allocated in sip1.cube3.sram",
    );
    expect(memory.allocationAt(noCube)).toBeNull();
  });

  it("rejects places that do not exist and memories that are too small", () => {
    const memory = new DeviceMemory(layout);
    expect(thrown(() => memory.allocHbm(1, { sip: 2, cube: 0 })).message).toContain(
      "SIP 2 does not exist: the device has 2 SIPs (0..1)",
    );
    expect(thrown(() => memory.allocTcm(1, { sip: 0, cube: 0, pe: -1 })).message).toContain(
      "PE -1 does not exist",
    );
    const hbmTooBig = thrown(() => memory.allocHbm(65 * MIB, { sip: 0, cube: 0 }, "huge"));
    expect(hbmTooBig.message).toContain("cube.hbm.capacity_bytes");
    const noSram = new DeviceMemory({ ...layout, sramBytesPerCube: 0 });
    expect(thrown(() => noSram.allocSram(1, { sip: 0, cube: 0 })).message).toContain("no allocatable bytes");
    expect(
      thrown(() => new DeviceMemory({ ...layout, tcmBytesPerPe: TCM_WINDOW_BYTES + 1 })).message,
    ).toContain("tcmBytesPerPe");
    expect(thrown(() => new DeviceMemory({ ...layout, cubesPerSip: 65 })).code).toBe("MEMORY_ALLOCATION");
  });

  it("tensorAt names the live HBM or SRAM tensor holding an address; null for TCM, padding and free memory", () => {
    const memory = new DeviceMemory(layout);
    const a = memory.allocHbm(24, { sip: 1, cube: 3 }, "A", { dtype: "f16", shape: [3, 4] });
    const s = memory.allocSram(4, { sip: 0, cube: 0 }, "S", { dtype: "i32", shape: [] });
    const raw = memory.allocHbm(100, { sip: 1, cube: 3 }, "scratch");
    const tile = memory.allocTcm(64, { sip: 0, cube: 0, pe: 0 }, "tile");
    const info = { name: "A", dtype: "f16", shape: [3, 4], address: a, bytes: 24 };
    expect(memory.tensorAt(a)).toEqual(info);
    expect(memory.tensorAt(a + 23)).toEqual(info);
    expect(memory.tensorAt(a + 23)).toBe(memory.tensorAt(a)); // no new object per call
    expect(memory.tensorAt(a + 24)).toBeNull();
    expect(memory.tensorAt(s)).toEqual({ name: "S", dtype: "i32", shape: [], address: s, bytes: 4 });
    expect(memory.tensorAt(raw + 99)).toEqual({
      name: "scratch",
      dtype: null,
      shape: null,
      address: raw,
      bytes: 100,
    });
    expect(memory.tensorAt(tile)).toBeNull();
    expect(memory.tensorAt(encodeAddress({ sip: 0, cube: 2, space: "hbm", offset: 0 }))).toBeNull();
    expect(memory.tensorAt(-1)).toBeNull();
    expect(memory.tensorAt(3 * 2 ** 40)).toBeNull();
    memory.free(a);
    expect(memory.tensorAt(a)).toBeNull();
  });

  it("tensorAt finds each of thousands of tensors", () => {
    const memory = new DeviceMemory({ ...layout, pageBytes: 4096 });
    const starts = Array.from({ length: 5000 }, (_, index) =>
      memory.allocHbm(4096, { sip: 0, cube: 0 }, `t${index}`, { dtype: "f32", shape: [1024] }),
    );
    starts.forEach((start, index) => {
      expect(memory.tensorAt(start + 4095)?.name).toBe(`t${index}`);
    });
  });

  it("reset frees everything", () => {
    const memory = new DeviceMemory(layout);
    const a = memory.allocHbm(1, { sip: 0, cube: 0 });
    memory.reset();
    expect(memory.stats()).toEqual([]);
    expect(memory.allocHbm(1, { sip: 0, cube: 0 })).toBe(a);
  });
});
