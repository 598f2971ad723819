import * as z from "zod";

// The parts of the results that show the spread, not only the means: per kind over instances
// and lanes, per lane, per HBM pseudo-channel and per link.

/** Mean, max and min of a utilisation over a set (see `Spread` of @kb/components). */
const spreadSchema = z.object({
  count: z.number().int(),
  mean: z.number(),
  max: z.number(),
  min: z.number(),
  busiest: z.string().describe("The member with the max: a component id, or `id lane` for a lane."),
  idlest: z.string().describe("The member with the min."),
});

/** `byKind[i].instances` and `.lanes`. */
export const kindSpreadShape = {
  instances: spreadSchema
    .optional()
    .describe(
      "Utilisation over the kind's components (each one's mean over its lanes); absent in results written before it was reported.",
    ),
  lanes: spreadSchema
    .optional()
    .describe(
      "Utilisation over every lane of the kind's components (a one-lane component is one lane): a PE_DMA read lane at 92% shows here while the component's mean over its read and write lanes is 46%.",
    ),
};

/** `components[i].lanes`. */
export const laneRowsSchema = z
  .array(
    z.object({
      name: z.string().describe("`read`/`write` (PE_DMA), `fetch`/`store` (PE_FETCH_STORE), `pc0`... (HBM)."),
      busyNs: z.number(),
      utilisation: z.number().describe("busyNs / simulated time."),
    }),
  )
  .optional()
  .describe("Each lane of a component with more than one lane whose busy time is counted per lane.");

/** `RunResults.hbmPorts`. */
export const hbmPortsSchema = z
  .array(
    z.object({
      id: z.string().describe("The HBM controller (stack), e.g. sip0.cube0.hbm_ctrl."),
      ports: z
        .array(
          z.object({
            busyNs: z.number().describe("Data-bus time, ns."),
            bytes: z.number().describe("Bytes served."),
            utilisation: z.number().describe("busyNs / simulated time."),
          }),
        )
        .describe(
          "Per pseudo-channel: port p is channel floor(p / pseudo_channels), pseudo-channel p mod pseudo_channels.",
        ),
    }),
  )
  .optional()
  .describe(
    "Each HBM controller that moved data, per pseudo-channel, over the whole run (host copies included); absent in results written before it was reported.",
  );

/** `RunResults.links`. */
export const linksSchema = z
  .array(
    z.object({
      src: z.string(),
      dst: z.string(),
      bwGbs: z.number(),
      bytes: z.number(),
      packets: z.number().int(),
      busyNs: z.number().describe("Bandwidth time charged: sum of bytes / bw, ns."),
      utilisation: z.number().describe("busyNs / simulated time (at most 1)."),
    }),
  )
  .optional()
  .describe(
    "Every directed link that carried packets, over the whole run; absent in results written before it was reported.",
  );
