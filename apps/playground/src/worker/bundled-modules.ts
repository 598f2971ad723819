import * as builtins from "@kb/builtins";
import * as ccl from "@kb/ccl";
import * as components from "@kb/components";
import * as errors from "@kb/errors";
import * as oplog from "@kb/oplog";
import * as runtime from "@kb/runtime";
import * as spec from "@kb/spec";
import * as tensor from "@kb/tensor";
import * as tl from "@kb/tl";
import * as topology from "@kb/topology";
import * as zod from "zod";
import builtinsPackage from "../../../../packages/builtins/package.json" with { type: "json" };
import cclPackage from "../../../../packages/ccl/package.json" with { type: "json" };
import componentsPackage from "../../../../packages/components/package.json" with { type: "json" };
import dataExecutorPackage from "../../../../packages/data-executor/package.json" with { type: "json" };
import desPackage from "../../../../packages/des/package.json" with { type: "json" };
import errorsPackage from "../../../../packages/errors/package.json" with { type: "json" };
import oplogPackage from "../../../../packages/oplog/package.json" with { type: "json" };
import runtimePackage from "../../../../packages/runtime/package.json" with { type: "json" };
import specPackage from "../../../../packages/spec/package.json" with { type: "json" };
import tensorPackage from "../../../../packages/tensor/package.json" with { type: "json" };
import tlPackage from "../../../../packages/tl/package.json" with { type: "json" };
import topologyPackage from "../../../../packages/topology/package.json" with { type: "json" };
import cliPackage from "../../../cli/package.json" with { type: "json" };

// The modules a bench may import by a bare name, as the worker bundles them, and the versions of
// the kb it is: a bench's `require("@kb/tl")` gets the worker's own copy, so its kernels run on
// the same classes as the simulator (one `TLContext`, one `KbError`).

/**
 * Bare imports a bench may use, by name. Each is the package's ES module namespace marked
 * `__esModule`, so sucrase's CommonJS interop reads named and default imports from it as is.
 */
export const BUNDLED_MODULES: Readonly<Record<string, unknown>> = Object.freeze({
  "@kb/builtins": esModule(builtins),
  "@kb/ccl": esModule(ccl),
  "@kb/components": esModule(components),
  "@kb/errors": esModule(errors),
  "@kb/oplog": esModule(oplog),
  "@kb/runtime": esModule(runtime),
  "@kb/spec": esModule(spec),
  "@kb/tensor": esModule(tensor),
  "@kb/tl": esModule(tl),
  "@kb/topology": esModule(topology),
  zod: esModule(zod),
});

/**
 * The manifest's package versions: those `kb run` records (apps/cli's `kbPackageVersions`: the
 * CLI and every @kb package a run uses), read from the package.json files the worker was built
 * from, so a playground run has the digest `kb run` gives the same bench, topology and params.
 */
export const KB_PACKAGE_VERSIONS: Readonly<Record<string, string>> = Object.freeze(
  Object.fromEntries(
    [
      cliPackage,
      builtinsPackage,
      cclPackage,
      componentsPackage,
      dataExecutorPackage,
      desPackage,
      errorsPackage,
      oplogPackage,
      runtimePackage,
      specPackage,
      tensorPackage,
      tlPackage,
      topologyPackage,
    ]
      .map((json): [string, string] => [json.name, json.version])
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
  ),
);

function esModule(namespace: object): unknown {
  return Object.freeze({ ...namespace, __esModule: true });
}
