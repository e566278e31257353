// The daemon's paths as openapi.json names them (openapi.ts, generated from it): every call names
// its operation by the document's path key and method, and fills the path's parameters here. A
// path the document does not have, a parameter it does not take, a body or an answer of another
// shape is then a compile error, never a hand-written URL that drifts from the daemon. A few types
// and one function: no library, nothing at run time beyond filling the path.
import type { paths } from './openapi.js';

export type Path = keyof paths;
export type Method = 'get' | 'post' | 'patch' | 'delete';
/** The paths with an operation for `M`. */
export type PathWith<M extends Method> = { [P in Path]: paths[P][M] extends undefined ? never : P }[Path];
/** The operation at `P` for `M`, as openapi-typescript generated it. */
export type Operation<P extends Path, M extends Method> = NonNullable<paths[P][M]>;

type Names<S> = S extends `${string}{${infer N}}${infer Rest}` ? N | Names<Rest> : never;
/** `{id: string}` for `/v1/sessions/{id}`; `{}` for a path without parameters. */
export type PathParams<P extends Path> = { [N in Names<P>]: string };

/** The JSON body an operation takes (`never` for one that takes none). */
export type RequestBody<O> = O extends { requestBody?: infer R } ? (NonNullable<R> extends { content: { 'application/json': infer B } } ? B : never) : never;
/** The query an operation takes. */
export type Query<O> = O extends { parameters: { query?: infer Q } } ? Q : never;
/** What an operation answers on success: its JSON body, or undefined for a status without one. */
export type Answer<O> = O extends { responses: infer R }
  ? { [S in keyof R]: S extends 200 | 201 | 202 | 204 ? (R[S] extends { content: { 'application/json': infer J } } ? J : undefined) : never }[keyof R]
  : never;

/** `path` with each `{name}` replaced by its parameter, escaped: `fillPath('/v1/sessions/{id}', {id})`. */
export function fillPath<P extends Path>(path: P, params: PathParams<P>): string {
  return path.replace(/\{(\w+)\}/g, (_m, name: string) => encodeURIComponent((params as Record<string, string>)[name]!));
}
