// A converter run over native lines in order, for converter unit tests: the state it ends in and
// every draft it produced.
import type { Converter, Draft } from '../../src/agents/types.js';

export function convertLines<S>(converter: Converter<S>, lines: unknown[], state: S = converter.initial()): { state: S; events: Draft[] } {
  const events: Draft[] = [];
  for (const line of lines) {
    const out = converter.convert(state, line);
    state = out.state;
    events.push(...out.events);
  }
  return { state, events };
}
