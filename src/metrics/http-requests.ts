// `agentwire_http_requests_total`, counted without prom-client on the request path. Counting
// through a prom-client counter costs a label hash (a string built from every label), a label
// check and a map lookup per request; here each route holds its own small table, made once the
// first time the route answers, and a request adds one to a number in it. The tables reach the
// counter only when someone scrapes (its collect hook), as the event counts do (observe-events.ts).
import type { Counter } from 'prom-client';

/** One route's answers, by method and status: what a request increments. */
export class RouteAnswers {
  /** method → status ('200', 'aborted' …) → answers. */
  readonly counts: Record<string, Record<string, number>> = Object.create(null);

  constructor(readonly route: string) {}

  count(method: string, status: number | 'aborted'): void {
    const byStatus = (this.counts[method] ??= Object.create(null) as Record<string, number>);
    byStatus[status] = (byStatus[status] ?? 0) + 1;
  }
}

export class HttpRequestCounts {
  private readonly tables: RouteAnswers[] = [];

  /** A table for one route (a route pattern, or `unmatched`); the caller keeps it with the route. */
  table(route: string): RouteAnswers {
    const table = new RouteAnswers(route);
    this.tables.push(table);
    return table;
  }

  /** Copies every table into the counter (its collect hook). A route may have several tables (a
   *  GET and its HEAD twin are two Fastify routes): their counts add up. */
  publish(counter: Counter<'method' | 'route' | 'status'>): void {
    counter.reset();
    for (const { route, counts } of this.tables) {
      for (const method in counts) {
        const byStatus = counts[method]!;
        for (const status in byStatus) counter.inc({ method, route, status }, byStatus[status]);
      }
    }
  }
}
