import type { WebTimelineFilter } from "./api.js";

// Which slices the timeline shows (a kernel line clicked in the source view, a search), apart from
// drawing: the filter in the query of GET /api/timeline, the test a slice passes, the chip's words.

/** The filter without its empty parts (a search of spaces is none); null when nothing is left. */
export function normalFilter(
  filter: { readonly site?: string | undefined; readonly search?: string | undefined } | null | undefined,
): WebTimelineFilter | null {
  const site = filter?.site ?? "";
  const search = (filter?.search ?? "").trim();
  if (site === "" && search === "") return null;
  return { ...(site === "" ? {} : { site }), ...(search === "" ? {} : { search }) };
}

/** The query parameters of a filter for `GET /api/timeline` (`site`, `q`). */
export function filterQuery(filter: WebTimelineFilter | null): Record<string, string> {
  const normal = normalFilter(filter);
  if (normal === null) return {};
  return {
    ...(normal.site === undefined ? {} : { site: normal.site }),
    ...(normal.search === undefined ? {} : { q: normal.search }),
  };
}

/** The filter a query asks for (`site`, `q`), or null. */
export function filterOfQuery(query: URLSearchParams): WebTimelineFilter | null {
  return normalFilter({ site: query.get("site") ?? undefined, search: query.get("q") ?? undefined });
}

/** A key naming the filter, the same for the same filter (for caches). */
export function filterKey(filter: WebTimelineFilter): string {
  return `${filter.site ?? ""}\u0000${(filter.search ?? "").toLowerCase()}`;
}

/**
 * The test a slice passes under `filter`: issued by its kernel line, and its name or its track's
 * name containing the search text, in any case.
 */
export function sliceTest(
  filter: WebTimelineFilter,
): (name: string, track: string, site: string | null) => boolean {
  const site = filter.site;
  const search = filter.search?.toLowerCase();
  return (name, track, sliceSite) =>
    (site === undefined || sliceSite === site) &&
    (search === undefined || name.toLowerCase().includes(search) || track.toLowerCase().includes(search));
}

/** The chip's words for a filter: `line benches/attention.ts:37`, `"dma"`, or both. */
export function filterLabel(filter: WebTimelineFilter): string {
  return [
    filter.site === undefined ? null : `line ${filter.site}`,
    filter.search === undefined ? null : `matching "${filter.search}"`,
  ]
    .filter((part) => part !== null)
    .join(", ");
}
