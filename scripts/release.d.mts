// Types of scripts/release.mjs's exports (its tests import them).

/** A workspace package: its folder and its package.json. */
export interface WorkspacePackage {
  readonly dir: string;
  readonly json: {
    name: string;
    version: string;
    private?: boolean;
    files?: string[];
    types?: string;
    [field: string]: unknown;
  };
}

export function workspacePackages(root: string): WorkspacePackage[];
export function dependencyOrder(packages: readonly WorkspacePackage[]): WorkspacePackage[];
export function publishScope(root: string): string;
export function publishedName(name: string, scope: string): string;
export function publishedManifest(
  json: WorkspacePackage["json"],
  versions: ReadonlyMap<string, string>,
  scope?: string,
): Record<string, unknown>;
