// The event stream's state, said in words: live, lost (and from which sequence it will resume),
// resumed after sequence N. The client reconnects by itself; the request log sees it happen.
import { useEffect, useReducer } from 'preact/hooks';
import type { RequestLog } from '../requests.js';

export function ConnectionIndicator(props: { log: RequestLog; sessionId: string; lastSequence: number; ended: boolean }) {
  const [, rerender] = useReducer((n: number) => n + 1, 0);
  useEffect(() => props.log.subscribe(() => rerender(0)), [props.log]);
  const stream = props.log.streams.get(props.sessionId);
  let text: string;
  let tone: string;
  if (!stream || stream.state === 'connecting') [text, tone] = ['Connecting to the event stream…', 'muted'];
  else if (stream.state === 'lost') [text, tone] = [`Connection lost after sequence ${props.lastSequence}; reconnecting…`, 'bad'];
  else if (stream.state === 'resumed') [text, tone] = [`Live: reconnected, resumed after sequence ${stream.after}`, 'good'];
  else [text, tone] = ['Live', 'good'];
  if (props.ended && stream?.state !== 'lost') [text, tone] = [`${text} · session ended`, tone];
  return (
    <p class={`connection ${tone}`} role="status" aria-label="Connection">
      {text}
    </p>
  );
}
