// Nullable components in the shape generators read. A field that is a registered schema or null
// (`orNull(Budget)`, src/schema/zod.ts) comes out of zod-to-openapi as `anyOf: [<ref>, {type:
// 'null'}]`, the ref sometimes wrapped in an `allOf` that only repeats the component's own
// description. This pass makes each one `oneOf: [{$ref}, {type: 'null'}]`: exactly one branch can
// match (a component is never null itself), openapi-typescript reads it as `T | null`, and a
// validating proxy lets `null` through, where an `allOf` with the ref (what `.nullable()` on a
// component gave) refuses it. test/unit/openapi/openapi-generators.test.ts walks the document.

type Node = Record<string, unknown>;

const isNull = (n: unknown): boolean => typeof n === 'object' && n !== null && Object.keys(n).length === 1 && (n as Node).type === 'null';

/** The `$ref` of `{$ref}` or of `{allOf: [{$ref}, {description}]}`, else undefined. */
function refOf(n: unknown): string | undefined {
  if (typeof n !== 'object' || n === null) return undefined;
  const node = n as Node;
  if (typeof node.$ref === 'string' && Object.keys(node).length === 1) return node.$ref;
  const all = node.allOf;
  if (Object.keys(node).length !== 1 || !Array.isArray(all) || all.length !== 2) return undefined;
  const [ref, meta] = all as Node[];
  const onlyDescription = Object.keys(meta ?? {}).every((k) => k === 'description');
  return onlyDescription ? refOf(ref) : undefined;
}

/** Rewrites every `anyOf: [ref, null]` of `doc` in place; returns how many it rewrote. */
export function nullableRefsAsOneOf(doc: unknown): number {
  if (typeof doc !== 'object' || doc === null) return 0;
  let rewritten = 0;
  const node = doc as Node;
  const any = node.anyOf;
  if (Array.isArray(any) && any.length === 2) {
    const nullAt = any.findIndex(isNull);
    const ref = nullAt < 0 ? undefined : refOf(any[1 - nullAt]);
    if (ref !== undefined) {
      delete node.anyOf;
      node.oneOf = [{ $ref: ref }, { type: 'null' }];
      rewritten++;
    }
  }
  for (const value of Object.values(node)) rewritten += nullableRefsAsOneOf(value);
  return rewritten;
}
