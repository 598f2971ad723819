// Writes topologies/topology.schema.json from the built package: `pnpm schema:write`.
import { writeFileSync } from "node:fs";
import { topologyJsonSchema } from "../dist/index.js";

const target = new URL("../../../topologies/topology.schema.json", import.meta.url);
writeFileSync(target, `${JSON.stringify(topologyJsonSchema(), null, 2)}\n`);
console.log(`wrote ${target.pathname}`);
