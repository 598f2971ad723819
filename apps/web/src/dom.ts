/// <reference lib="dom" />
// DOM helpers the pages share (kb web's run and sweep pages, the playground).

/** The element of the page with id `id`; a page without it is a bug of the page, thrown as such. */
export function byId<T extends HTMLElement = HTMLElement>(id: string): T {
  const found = document.getElementById(id);
  if (found === null) throw new Error(`the page has no #${id}`);
  return found as T;
}
