// The committed openapi.json as a validating proxy would read it: every exchange the suite makes
// (request and answer) is checked against its operation, so a drift between the daemon and the
// document fails the test that made the request. `checkExchange` is the check; `recordExchange`
// keeps its violations (./openapi-violations.ts) until test/support/openapi-setup.ts (a vitest
// setup file) fails the test with them. The apps of makeApp() (helpers.ts) feed it through a hook
// that taps every answer (`installOpenApiCheck`, ./openapi-tap.ts), the client tests through a
// checking `fetch` (`checkingFetch`).
//
// What is checked, as a proxy would: the operation exists (method and path; the inspector's
// files and answers no route took are not operations); the status is one it documents; the
// content type is one that status documents, and a 204 or 202 without content has no body; a
// JSON body (problem+json included) is valid against its schema, SSE frames' `data:` and NDJSON
// lines against the item schema; and, when the daemon accepted the request (2xx), that the request
// was one the document allows: its JSON body valid (or absent where it may be), and each query
// parameter declared (`token` only where `tokenQuery` is). The validators are Ajv's, in its JSON
// Schema 2020-12 dialect (the one OpenAPI 3.1 uses); every component's is compiled once per
// document, not once per test file (`precompiled`).
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import standalone from 'ajv/dist/standalone/index.js';
import { recordViolations } from './openapi-violations.js';

type Json = Record<string, any>;
const TEXT = readFileSync(new URL('../../openapi.json', import.meta.url), 'utf8');
const DOCUMENT = JSON.parse(TEXT) as Json;
const DOC_ID = 'agentwire-openapi';

// strict: false: the document carries OpenAPI's own keywords (`example`, `x-…`) beside JSON Schema.
// `discriminator`: an event is checked against the one variant its `type` names, not tried against
// each of the union's (the same verdict, since each variant's `type` enum is its own; Ajv takes no
// `mapping`, which says the same again). One instance stops at the first error (every exchange);
// the other, asked only about a value the first refused, finds them all, so the report can name
// the one that matters. Both are made on first use: a test file that checks nothing pays nothing.
const OPTIONS = { strict: false, validateFormats: false, discriminator: true, validateSchema: false } as const;
let ajv: Ajv2020 | undefined;
let explain: Ajv2020 | undefined;
function validators(all: boolean): Ajv2020 {
  if (all) return (explain ??= new Ajv2020({ ...OPTIONS, allErrors: true }).addSchema({ ...withoutMappings(DOCUMENT), $id: DOC_ID }));
  return (ajv ??= new Ajv2020({ ...OPTIONS, allErrors: false }).addSchema({ ...withoutMappings(DOCUMENT), $id: DOC_ID }));
}

/**
 * Every component's validator, compiled once for this document: compiling them costs about 2 s
 * (the event union most of it), which each test file would pay again, since every file runs in a
 * process of its own. So the first file to need them writes Ajv's standalone code for all of
 * them to node_modules/.cache/agentwire, named by the document's hash (written aside and renamed,
 * so files starting together never read half of one), and every file loads that in ~50 ms.
 */
let shared: Record<string, ValidateFunction> | undefined;
function precompiled(): Record<string, ValidateFunction> {
  if (shared) return shared;
  const hash = createHash('sha256').update(TEXT).update(JSON.stringify(OPTIONS)).digest('hex').slice(0, 16);
  const file = fileURLToPath(new URL(`../../node_modules/.cache/agentwire/openapi-validators-${hash}.cjs`, import.meta.url));
  if (!existsSync(file)) {
    const builder = new Ajv2020({ ...OPTIONS, code: { source: true } }).addSchema({ ...withoutMappings(DOCUMENT), $id: DOC_ID });
    const names = Object.keys(DOCUMENT.components.schemas as Json);
    // A CommonJS module: its default export is the namespace, whose `default` is the function.
    const code = standalone.default(builder, Object.fromEntries(names.map((name) => [name, `${DOC_ID}#/components/schemas/${name}`])));
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(`${file}.${process.pid}`, code);
    renameSync(`${file}.${process.pid}`, file);
  }
  shared = createRequire(import.meta.url)(file) as Record<string, ValidateFunction>;
  return shared;
}

function withoutMappings(node: unknown): any {
  if (Array.isArray(node)) return node.map(withoutMappings);
  if (typeof node !== 'object' || node === null) return node;
  return Object.fromEntries(
    Object.entries(node).map(([key, value]) => [key, key === 'discriminator' ? { propertyName: (value as Json).propertyName } : withoutMappings(value)]),
  );
}

interface Operation {
  method: string;
  path: string;
  pattern: RegExp;
  op: Json;
}

const OPERATIONS: Operation[] = Object.entries(DOCUMENT.paths as Record<string, Json>)
  .flatMap(([path, methods]) => Object.entries(methods).map(([method, op]) => ({ method: method.toUpperCase(), path, op: op as Json, pattern: pathPattern(path) })))
  // Literal paths before templated ones (none overlap today; this keeps it so).
  .sort((a, b) => (a.path.match(/\{/g)?.length ?? 0) - (b.path.match(/\{/g)?.length ?? 0));

function pathPattern(path: string): RegExp {
  const source = path.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\\?\{\w+\\?\}|\{\w+\}/g, '[^/]+');
  return new RegExp(`^${source}$`);
}

/** Served and no API operation: the inspector's page, its files and the API reference (public). */
const NOT_OPERATIONS = /^\/(ui(\/.*)?|docs(\/.*)?)?$/;

function pointer(...parts: string[]): string {
  return parts.map((p) => p.replace(/~/g, '~0').replace(/\//g, '~1')).join('/');
}

const compiled = new Map<string, ValidateFunction>();
/** The validator of the schema at `path` (a JSON pointer into the document), compiled once: a
 *  schema that only names a component is that component's validator (every problem+json response
 *  of every operation shares Problem's). */
function validator(path: string, all = false): ValidateFunction {
  const node = path.split('/').reduce<Json | undefined>((n, part) => n?.[part.replace(/~1/g, '/').replace(/~0/g, '~')], DOCUMENT);
  const ref = node && Object.keys(node).length === 1 && typeof node.$ref === 'string' ? (node.$ref as string).slice(2) : undefined;
  if (ref) path = ref;
  const component = path.startsWith('components/schemas/') ? precompiled()[path.slice('components/schemas/'.length)] : undefined;
  if (component && !all) return component;
  const key = `${all ? 'all:' : ''}${path}`;
  let validate = compiled.get(key);
  if (!validate) {
    validate = validators(all).compile({ $ref: `${DOC_ID}#/${path}` });
    compiled.set(key, validate);
  }
  return validate;
}

function invalid(path: string, value: unknown): string | undefined {
  if (validator(path)(value)) return undefined;
  const all = validator(path, true);
  all(value);
  const errors = all.errors ?? [];
  // In a union of event types, every branch but one fails on `type`: those, and the union's own
  // summary, say less than the branch that matched its type and failed on a field.
  const telling = errors.filter((e) => !['oneOf', 'anyOf'].includes(e.keyword) && !(['enum', 'const'].includes(e.keyword) && e.instancePath.endsWith('/type')));
  return (telling.length > 0 ? telling : errors)
    .slice(0, 3)
    .map((e) => `${e.instancePath || '(root)'} ${e.message}${e.params ? ` ${JSON.stringify(e.params)}` : ''}`)
    .join('; ');
}

/** One request and its answer, as the daemon saw them. */
export interface Exchange {
  method: string;
  /** The URL path with its query string, as sent. */
  url: string;
  /** The parsed JSON request body; undefined when none was sent. */
  requestBody: unknown;
  status: number;
  /** The answer's Content-Type header, if any. */
  contentType: string | undefined;
  /** The answer's body as text; undefined when it is not known (a stream still running). */
  body: string | undefined;
}

/** The operation an exchange is, if the document has one. */
export function findOperation(method: string, url: string): Operation | undefined {
  const path = url.split('?')[0]!;
  const wanted = method === 'HEAD' ? 'GET' : method;
  return OPERATIONS.find((o) => o.method === wanted && o.pattern.test(path));
}

/** The violations of one exchange: empty when the document describes it. */
export function checkExchange(x: Exchange): string[] {
  const path = x.url.split('?')[0]!;
  const found = findOperation(x.method, x.url);
  if (!found) {
    // A refusal no operation makes (404 for an unknown path, 405 for a method) is no operation.
    // CORS preflights (OPTIONS) are the browser's, answered by the CORS plugin: no operation either.
    const answered = x.status < 400 && !NOT_OPERATIONS.test(path) && x.method !== 'OPTIONS';
    return answered ? [`${x.method} ${path}: answered ${x.status}, and the document has no such operation`] : [];
  }
  const name = `${found.op.operationId} (${x.method} ${found.path})`;
  const violations = [...checkResponse(found, x), ...(x.status >= 200 && x.status < 300 ? checkRequest(found, x) : [])];
  return violations.map((v) => `${name}: ${v}`);
}

function checkResponse({ method, path, op }: Operation, x: Exchange): string[] {
  const status = String(x.status);
  const response = (op.responses[status] ?? op.responses.default) as Json | undefined;
  if (!response) return [`status ${status} is not documented (it documents ${Object.keys(op.responses).join(', ')})`];
  const media = x.contentType?.split(';')[0]!.trim().toLowerCase();
  const content = (response.content ?? {}) as Json;
  if (Object.keys(content).length === 0) {
    return x.body ? [`status ${status} documents no body, and the answer has ${x.body.length} bytes (${media})`] : [];
  }
  if (!media || !(media in content)) return [`status ${status} answered ${media ?? 'no content type'}; the document says ${Object.keys(content).join(' or ')}`];
  if (x.body === undefined || x.method === 'HEAD') return [];
  const at = pointer('paths', path, method.toLowerCase(), 'responses', status, 'content', media, 'schema');
  return items(media, x.body).flatMap((item, i, all) => {
    const problem = invalid(at, item);
    return problem ? [`the ${status} ${media} body${all.length > 1 ? ` (item ${i + 1})` : ''} is not valid: ${problem}`] : [];
  });
}

/** What a body holds for its media type: one JSON value, or a stream's items. */
function items(media: string, body: string): unknown[] {
  const parse = (text: string) => {
    try {
      return JSON.parse(text) as unknown;
    } catch {
      return Symbol.for('not JSON');
    }
  };
  if (media === 'text/event-stream') return body.split('\n').filter((l) => l.startsWith('data:')).map((l) => parse(l.slice(5).trim()));
  if (media === 'application/x-ndjson') return body.split('\n').filter((l) => l.trim() !== '').map(parse);
  if (media.endsWith('json')) return [parse(body)];
  return [];
}

function checkRequest({ method, path, op }: Operation, x: Exchange): string[] {
  const violations: string[] = [];
  const declared = new Set(((op.parameters ?? []) as Json[]).filter((p) => p.in === 'query').map((p) => p.name as string));
  if ((op.security as Json[] | undefined)?.some((s) => 'tokenQuery' in s)) declared.add('token');
  const query = new URLSearchParams(x.url.split('?')[1] ?? '');
  for (const name of new Set(query.keys())) {
    if (!declared.has(name)) violations.push(`the daemon accepted the query parameter '${name}', which the document does not declare`);
  }
  const body = op.requestBody as Json | undefined;
  if (x.requestBody === undefined) {
    if (body?.required) violations.push('the daemon accepted a request without the body the document requires');
    return violations;
  }
  if (!body) return [...violations, 'the daemon accepted a request body the document does not declare'];
  const problem = invalid(pointer('paths', path, method.toLowerCase(), 'requestBody', 'content', 'application/json', 'schema'), x.requestBody);
  if (problem) violations.push(`the daemon accepted a request body the document refuses: ${problem}`);
  return violations;
}

export function recordExchange(x: Exchange): void {
  recordViolations(checkExchange(x));
}

export const STREAMS = new Set(['text/event-stream', 'application/x-ndjson']);
export const mediaOf = (type: string) => type.split(';')[0]!.trim().toLowerCase();

/**
 * A `fetch` for agentwire-client (its `fetch` option) that checks each exchange it makes with a
 * daemon process: the request as sent, the answer's status and type, and a JSON answer's body
 * (read from a clone). A stream's body is left to the client alone: reading a clone of it would
 * hold the connection open after the client cancels its half.
 */
export function checkingFetch(inner: (input: string, init: RequestInit) => Promise<Response> = (i, n) => globalThis.fetch(i, n)) {
  return async (input: string, init: RequestInit): Promise<Response> => {
    const response = await inner(input, init);
    const url = new URL(input);
    const media = response.headers.get('content-type') ?? undefined;
    const streaming = media !== undefined && STREAMS.has(mediaOf(media));
    const body = streaming ? undefined : await response.clone().text();
    recordExchange({
      method: (init.method ?? 'GET').toUpperCase(),
      url: url.pathname + url.search,
      requestBody: typeof init.body === 'string' && init.body !== '' ? (JSON.parse(init.body) as unknown) : undefined,
      status: response.status,
      contentType: media,
      body,
    });
    return response;
  };
}
