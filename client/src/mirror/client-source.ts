// How the mirror reads a daemon. TEMPORARY: polls GET /events until the client core lands; then
// this is session.events() of @agentwire/client.
import type { DaemonSource, DaemonTarget, MirroredEvent, SessionSummary } from './types.js';

export function clientSource(daemon: DaemonTarget, fetchImpl: typeof fetch = fetch): DaemonSource {
  const headers: Record<string, string> = daemon.token ? { authorization: `Bearer ${daemon.token}` } : {};
  const get = async (path: string, signal: AbortSignal) => {
    const res = await fetchImpl(`${daemon.baseUrl}${path}`, { headers, signal });
    if (!res.ok) throw new Error(`${path}: ${res.status} ${await res.text()}`);
    return res.json();
  };
  return {
    async listSessions(signal) {
      return ((await get('/v1/sessions', signal)) as { sessions: SessionSummary[] }).sessions;
    },
    async *events(sessionId, after, signal) {
      for (;;) {
        const page = (await get(`/v1/sessions/${sessionId}/events?offset=${after}&limit=2000`, signal)) as { events: MirroredEvent[] };
        for (const e of page.events) yield e;
        if (page.events.length) after = page.events.at(-1)!.sequence;
        else await new Promise((r) => setTimeout(r, 50));
        if (page.events.at(-1)?.type === 'session.ended') return;
      }
    },
  };
}
