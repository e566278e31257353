// What every converter emits for input it cannot read (the Pure converters rule: never throw): one
// `agent.unparsed` draft naming the converter and a short reason, with a hash of the raw input so
// repeated garbage can be recognised without storing it in the event.
import { createHash } from 'node:crypto';
import type { Converter, Draft } from './types.js';

export function unparsedDraft(location: string, error: string, native: unknown): Draft {
  const hash = rawHash(native);
  return { type: 'agent.unparsed', source: 'daemon', synthetic: true, data: { error, location, ...(hash !== undefined ? { raw_hash: hash } : {}) } };
}

/** sha256 of the raw text when we have it, else of the re-serialised JSON; first 16 hex digits. */
function rawHash(native: unknown): string | undefined {
  try {
    const raw = typeof native === 'string' ? native : (JSON.stringify(native) ?? String(native));
    return createHash('sha256').update(raw).digest('hex').slice(0, 16);
  } catch {
    return undefined;
  }
}

/** A short reason from zod issues: the offending `type` for a bad discriminator, else paths. */
export function summariseIssues(issues: readonly { code: string; path: readonly PropertyKey[]; message: string }[], native: unknown): string {
  const first = issues[0];
  // zod's wording for a bad discriminator lists every type; the offending value says more.
  if (first?.code === 'invalid_union' && first.path.length === 1 && first.path[0] === 'type') {
    const type = (native as { type?: unknown }).type;
    return type === undefined ? 'missing type' : `unknown type ${JSON.stringify(type) ?? String(type)}`;
  }
  const text = issues
    .slice(0, 3)
    .map((issue) => `${issue.path.map(String).join('.') || '(root)'}: ${issue.message}`)
    .join('; ');
  return text.length > 200 ? `${text.slice(0, 199)}…` : text;
}

/**
 * A converter from its initial state and its step function, guarded so that it never throws
 * (rule: Pure converters): a bug in the step becomes one `agent.unparsed` for that input, and the state
 * before it is kept.
 */
export function guardedConverter<S>(location: string, initial: () => S, step: (state: S, native: unknown) => { state: S; events: Draft[] }): Converter<S> {
  return {
    initial,
    convert(state, native) {
      try {
        return step(state, native);
      } catch (err) {
        return { state, events: [unparsedDraft(location, `converter failure: ${String(err)}`, native)] };
      }
    },
  };
}
