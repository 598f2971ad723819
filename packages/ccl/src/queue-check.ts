import { KbError } from "@kb/errors";
import { commandList, type KernelPlacement, type TL } from "@kb/tl";
import { type Direction, oppositeDirection, type RankGroup } from "./ranks.js";

/** A command a kernel issues (what `commandList` of `@kb/tl` returns). */
export type PeCommand = Awaited<ReturnType<typeof commandList>>[number];

/**
 * The placement of `rank`'s lane `lane` as the process group launches a group: for command-list
 * runs of a collective kernel (`commandList(kernel, [args], { placement, ... })`).
 */
export function rankPlacement(group: RankGroup, rank: number, lane = 0, lanes = 1): KernelPlacement {
  const member = group.members[rank] as number;
  const n = group.size;
  switch (group.scope) {
    case "pes":
      return {
        pe: `sip0.cube0.pe${member}`,
        sip: 0,
        cube: 0,
        peIndex: member,
        programId: [rank, 0, 0],
        numPrograms: [n, 1, 1],
      };
    case "cubes":
      return {
        pe: `sip0.cube${member}.pe${lane}`,
        sip: 0,
        cube: member,
        peIndex: lane,
        programId: [lane, rank, 0],
        numPrograms: [lanes, n, 1],
      };
    default:
      return {
        pe: `sip${member}.cube0.pe${lane}`,
        sip: member,
        cube: 0,
        peIndex: lane,
        programId: [lane, 0, rank],
        numPrograms: [lanes, 1, n],
      };
  }
}

/** An IPCQ send or receive command. */
export type IpcqCommand = Extract<PeCommand, { kind: "ipcq_send" | "ipcq_recv" }>;

/**
 * Runs a collective kernel in command-list mode once per rank and lane, as the process group would
 * launch it (no machine, no data): `commands[rank][lane]`. Scratch: 1 MiB at TCM offset 1 MiB.
 */
export async function commandsOfRanks<A>(
  kernel: (tl: TL, args: A) => Promise<void>,
  args: A,
  group: RankGroup,
  lanes = 1,
): Promise<PeCommand[][][]> {
  const out: PeCommand[][][] = [];
  for (let rank = 0; rank < group.size; rank++) {
    const perLane: PeCommand[][] = [];
    for (let lane = 0; lane < lanes; lane++) {
      perLane.push(
        await commandList(kernel, [args], {
          kernel: kernel.name,
          placement: rankPlacement(group, rank, lane, lanes),
          scratch: { offset: 2 ** 20, bytes: 2 ** 20 },
        }),
      );
    }
    out.push(perLane);
  }
  return out;
}

/** The IPCQ commands of a command list, in order. */
export function ipcqCommands(commands: readonly PeCommand[]): IpcqCommand[] {
  return commands.filter((c): c is IpcqCommand => c.kind === "ipcq_send" || c.kind === "ipcq_recv");
}

/** The rank that `rank` reaches in `direction` (one of its ring hops). */
function neighbourRank(group: RankGroup, rank: number, direction: string): number {
  const n = group.size;
  if (group.next[rank] === direction) return (rank + 1) % n;
  if (group.prev[rank] === direction) return (rank - 1 + n) % n;
  throw new KbError(
    "RUNTIME_INVALID",
    `rank ${rank} sends to "${direction}", which is not one of its ring hops (${group.next[rank]}, ${group.prev[rank]}).`,
  );
}

/**
 * Plays the ranks' IPCQ commands (`programs[rank]`, one lane) against a model of the queues: a
 * send needs one of `slots` credits of the receiver's queue and completes at once; a receive takes
 * the oldest payload of its queue and returns the credit. Returns `{ messages }` when every
 * program ran to its end, `{ deadlock }` naming each rank's stuck command when no rank can move.
 * Throws `RUNTIME_INVALID` when a receive expects another size than what arrives, a payload is
 * never received, or a send goes somewhere that is not a ring hop. Timing-free: it checks the
 * order of messages, not how long they take.
 */
export function runQueues(
  group: RankGroup,
  programs: readonly (readonly IpcqCommand[])[],
  slots: number,
): { readonly messages: number } | { readonly deadlock: string } {
  const queues = new Map<string, number[]>(); // `${rank}<${from}` -> payload bytes
  const queue = (rank: number, from: string) => {
    const key = `${rank}<${from}`;
    let q = queues.get(key);
    if (q === undefined) {
      q = [];
      queues.set(key, q);
    }
    return q;
  };
  const pc = programs.map(() => 0);
  let messages = 0;
  for (;;) {
    let moved = false;
    for (let rank = 0; rank < programs.length; rank++) {
      const program = programs[rank] as readonly IpcqCommand[];
      while ((pc[rank] as number) < program.length) {
        const command = program[pc[rank] as number] as IpcqCommand;
        if (command.kind === "ipcq_send") {
          const to = neighbourRank(group, rank, command.direction);
          const q = queue(to, oppositeDirection(command.direction as Direction));
          if (q.length >= slots) break;
          q.push(command.bytes);
          messages++;
        } else {
          const q = queue(rank, command.direction as string);
          if (q.length === 0) break;
          const bytes = q.shift() as number;
          if (bytes !== command.bytes) {
            throw new Error(
              `rank ${rank} received ${bytes} bytes from ${command.direction}, expected ${command.bytes}`,
            );
          }
        }
        pc[rank] = (pc[rank] as number) + 1;
        moved = true;
      }
    }
    if (pc.every((p, rank) => p === (programs[rank] as readonly IpcqCommand[]).length)) break;
    if (!moved) {
      const stuck = pc
        .map((p, rank) => {
          const command = (programs[rank] as readonly IpcqCommand[])[p];
          return command === undefined ? null : `rank ${rank}: ${command.kind} ${command.direction}`;
        })
        .filter((line) => line !== null);
      return { deadlock: stuck.join("; ") };
    }
  }
  const left = [...queues.entries()].filter(([, q]) => q.length > 0).map(([key]) => key);
  if (left.length > 0) {
    throw new KbError(
      "RUNTIME_INVALID",
      `payloads never received: queue(s) ${left.join(", ")} still hold some.`,
    );
  }
  return { messages };
}
