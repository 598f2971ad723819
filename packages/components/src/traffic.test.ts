import { defaultRegistry } from "@kb/builtins";
import { describe, expect, it } from "vitest";
import { buildMachine } from "./machine.js";
import { bookSimMesh } from "./test-support.js";
import { startTraffic, type TrafficPacket } from "./traffic.js";
import { TRAFFIC_PATTERNS, trafficPattern } from "./traffic-patterns.js";

const dma = (pe: number) => `sip0.cube0.pe${pe}.pe_dma`;

/** Runs traffic until `untilNs`, stops it, drains the fabric and returns every packet delivered. */
function collect(
  rows: number,
  cols: number,
  options: {
    destination: (source: number, random: () => number) => number;
    rate: number;
    bytes: number;
    seed?: number;
  },
  untilNs: number,
): TrafficPacket[] {
  const machine = buildMachine(bookSimMesh(rows, cols), { registry: defaultRegistry() });
  const packets: TrafficPacket[] = [];
  const run = startTraffic(machine, {
    endpoints: Array.from({ length: rows * cols }, (_, pe) => dma(pe)),
    destination: options.destination,
    packetBytes: options.bytes,
    packetsPerCycle: options.rate,
    cycleNs: 1,
    seed: options.seed ?? 0,
    delivered: (packet) => packets.push(packet),
  });
  machine.run(untilNs);
  run.stop();
  machine.run();
  expect(run.delivered).toBe(run.created);
  return packets;
}

describe("startTraffic", () => {
  it("a packet from one corner to the other of a 2 x 2 mesh arrives after 1 + 5H + P ns (BookSim's zero-load latency)", () => {
    // Endpoint 0 (r0c0) sends 32 B (2 flits) to endpoint 3 (r1c1), created at cycle 0 (rate 1,
    // stopped at 1 ns); the others send to themselves. The route crosses H = 3 routers: 1 ns per
    // channel over H + 1 channels, 4 ns per router and 2 ns of serialisation: 1 + 5 x 3 + 2 = 18.
    const packets = collect(
      2,
      2,
      { destination: (source) => (source === 0 ? 3 : source), rate: 1, bytes: 32 },
      1,
    );
    const first = packets.filter((packet) => packet.source === 0);
    expect(first).toHaveLength(1);
    expect(first[0]).toMatchObject({ createdNs: 0, injectedNs: 0, arrivedNs: 18, destination: 3 });
    // A self-addressed packet crosses its own router: H = 1, 1 + 5 + 2 = 8 ns.
    expect(packets.find((packet) => packet.source === 2)).toMatchObject({ destination: 2, arrivedNs: 8 });
  });

  it("injects Bernoulli starts at the rate asked, the same packets for the same seed, others for another", () => {
    const run = (seed: number) =>
      collect(4, 4, { destination: trafficPattern("uniform", 4, 4), rate: 0.05, bytes: 16, seed }, 5000).map(
        (packet) => [packet.source, packet.destination, packet.createdNs, packet.arrivedNs].join(" "),
      );
    const a = run(1);
    // 16 endpoints x 5000 cycles x 0.05 = 4000 expected; the binomial's sd is ~62.
    expect(a.length).toBeGreaterThan(3750);
    expect(a.length).toBeLessThan(4250);
    expect(run(1)).toEqual(a);
    expect(run(2)).not.toEqual(a);
    for (const packet of a) expect(Number.isInteger(Number(packet.split(" ")[2]))).toBe(true);
  });

  it("refuses a bad rate, an unknown endpoint and a destination outside the endpoints, saying which", () => {
    const machine = buildMachine(bookSimMesh(2, 2), { registry: defaultRegistry() });
    const base = {
      endpoints: [dma(0), dma(1)],
      destination: () => 1,
      packetBytes: 16,
      packetsPerCycle: 0.5,
      cycleNs: 1,
      seed: 0,
      delivered: () => {},
    };
    expect(() => startTraffic(machine, { ...base, packetsPerCycle: 1.5 })).toThrow(
      /packetsPerCycle is 1.5.*\(0, 1\]/,
    );
    expect(() => startTraffic(machine, { ...base, endpoints: ["sip0.cube0.pe9.pe_dma"] })).toThrow(
      /endpoint "sip0.cube0.pe9.pe_dma" is not a node/,
    );
    startTraffic(machine, { ...base, destination: () => 7 });
    expect(() => machine.run(10)).toThrow(
      /from endpoint 0 \(sip0.cube0.pe0.pe_dma\) to 7, which is not an endpoint index \(0..1\)/,
    );
  });
});

describe("trafficPattern", () => {
  it("gives BookSim 2's permutations on an 8 x 8 mesh (node x + 8y)", () => {
    const at = (x: number, y: number) => x + 8 * y;
    const none = () => 0;
    expect(trafficPattern("transpose", 8, 8)(at(2, 5), none)).toBe(at(5, 2));
    expect(trafficPattern("bitcomp", 8, 8)(at(2, 5), none)).toBe(at(5, 2));
    expect(trafficPattern("bitcomp", 8, 8)(at(0, 0), none)).toBe(at(7, 7));
    expect(trafficPattern("bitrev", 8, 8)(0b000001, none)).toBe(0b100000);
    expect(trafficPattern("shuffle", 8, 8)(0b100001, none)).toBe(0b000011);
    expect(trafficPattern("tornado", 8, 8)(at(1, 6), none)).toBe(at(4, 1));
    expect(trafficPattern("neighbor", 8, 8)(at(7, 2), none)).toBe(at(0, 3));
    expect(trafficPattern("uniform", 8, 8)(0, () => 0.999_999)).toBe(63);
    expect(TRAFFIC_PATTERNS).toContain("uniform");
  });

  it("gives BookSim 2's randperm: the permutation its Knuth generator draws from perm_seed", () => {
    // BookSim 2 (28f43299) RandomPermutationTrafficPattern, dumped: perm_seed 0 on 64 and 16
    // nodes, perm_seed 7 on 16.
    const none = () => 0;
    const all = (name: string, k: number) =>
      Array.from({ length: k * k }, (_, source) => trafficPattern(name, k, k)(source, none));
    expect(all("randperm", 8).slice(0, 12)).toEqual([54, 30, 25, 6, 57, 53, 17, 9, 40, 49, 22, 24]);
    expect(all("randperm", 8)[63]).toBe(23);
    expect([...all("randperm", 8)].sort((a, b) => a - b)).toEqual(Array.from({ length: 64 }, (_, i) => i));
    expect(all("randperm", 4)).toEqual([2, 8, 6, 1, 0, 11, 4, 5, 3, 14, 10, 7, 15, 12, 9, 13]);
    expect(all("randperm(7)", 4)).toEqual([10, 2, 13, 9, 3, 1, 5, 15, 0, 14, 12, 6, 8, 7, 11, 4]);
    expect(all("randperm(0)", 4)).toEqual(all("randperm", 4));
    expect(TRAFFIC_PATTERNS).toContain("randperm");
  });

  it("refuses an unknown name and a bit pattern on a mesh whose node count is not a power of two", () => {
    expect(() => trafficPattern("hotspot", 8, 8)).toThrow(/unknown pattern; use one of uniform, transpose/);
    expect(() => trafficPattern("bitcomp", 3, 3)).toThrow(/9 nodes is not a power of two/);
    expect(() => trafficPattern("randperm(x)", 4, 4)).toThrow(/randperm\(SEED\) needs a whole number/);
  });
});
