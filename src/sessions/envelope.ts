// An event's envelope as JSON, the one serialization the log does per event. It is the hottest
// code in the daemon (every agent message passes through it once), so the fixed fields are
// written around a single JSON.stringify of `data` instead of stringifying the whole envelope:
// the session id's JSON is computed once per log, the native session id's once per change.
// The output is byte for byte what JSON.stringify(event) gives (envelope.test.ts checks it).
import type { UniversalEvent } from '../schema/events.js';

export class EnvelopeWriter {
  private readonly sessionIdJson: string;
  private nativeId: string | null = null;
  private nativeIdJson = 'null';

  constructor(sessionId: string) {
    this.sessionIdJson = JSON.stringify(sessionId);
  }

  /** The envelope as JSON; if its data cannot be serialized, the event becomes an error saying so. */
  serialize(event: UniversalEvent): string {
    let data: string | undefined;
    try {
      data = JSON.stringify(event.data);
    } catch (err) {
      return unserializable(event, err as Error);
    }
    // Shapes the fast path does not cover (no data, a non-boolean flag) keep JSON.stringify's rules.
    if (data === undefined || typeof event.synthetic !== 'boolean') return JSON.stringify(event);
    if (event.native_session_id !== this.nativeId) {
      this.nativeId = event.native_session_id;
      this.nativeIdJson = JSON.stringify(this.nativeId);
    }
    return (
      `{"event_id":${JSON.stringify(event.event_id)},"sequence":${event.sequence},"time":"${event.time}",` +
      `"session_id":${this.sessionIdJson},"native_session_id":${this.nativeIdJson},"source":"${event.source}",` +
      `"synthetic":${event.synthetic},"type":"${event.type}","data":${data},"raw":null}`
    );
  }
}

/** The event is replaced, in place, by an error saying why it could not be written. */
function unserializable(event: UniversalEvent, err: Error): string {
  const replaced = {
    ...event,
    source: 'daemon',
    synthetic: true,
    type: 'error',
    data: { message: `a ${event.type} event could not be serialized: ${err.message}`, code: 'unserializable_event' },
  };
  Object.assign(event, replaced);
  return JSON.stringify(replaced);
}
