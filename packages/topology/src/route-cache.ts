import type { Route } from "./route.js";

/**
 * The routes a router has handed out, by source then destination: the same pair returns the same
 * object. Shared by `Router` and `RegionRouter`, whose `route` is this cache over their
 * `findRoute`. @internal
 */
export class RouteCache {
  private readonly bySource: (Map<number, Route> | undefined)[];

  constructor(nodeCount: number) {
    this.bySource = new Array<Map<number, Route> | undefined>(nodeCount);
  }

  /** The kept route of `src` -> `dst`, found with `find` the first time. */
  get(src: number, dst: number, find: (src: number, dst: number) => Route): Route {
    let routes = this.bySource[src];
    if (routes === undefined) {
      routes = new Map();
      this.bySource[src] = routes;
    }
    let route = routes.get(dst);
    if (route === undefined) {
      route = find(src, dst);
      routes.set(dst, route);
    }
    return route;
  }
}
