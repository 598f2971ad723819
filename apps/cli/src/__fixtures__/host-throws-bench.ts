import { defineBench } from "@kb/runtime";
import * as z from "zod";

/** A bench whose host code (not a kernel) throws before it launches anything. */
export default defineBench({
  name: "host-throws",
  params: z.object({}),
  async run(sim) {
    sim.empty([4, 4], "f16");
    throw new Error("host boom");
  },
});
