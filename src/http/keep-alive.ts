// SSE keep-alive comments for every stream of the daemon (session streams and the feed).
import type { StreamOutput } from './stream-output.js';

/**
 * One timer per keep-alive interval for all SSE streams, not one per stream: thousands of idle
 * readers then cost one wake-up every 15 s.
 */
const keepAliveGroups = new Map<number, { streams: Set<StreamOutput>; timer: NodeJS.Timeout }>();
const KEEP_ALIVE = Buffer.from(': keep-alive\n\n');

export function keepAlive(intervalMs: number, out: StreamOutput): () => void {
  let group = keepAliveGroups.get(intervalMs);
  if (!group) {
    const streams = new Set<StreamOutput>();
    const timer = setInterval(() => streams.forEach((o) => o.write(KEEP_ALIVE)), intervalMs);
    timer.unref();
    keepAliveGroups.set(intervalMs, (group = { streams, timer }));
  }
  const { streams, timer } = group;
  streams.add(out);
  return () => {
    streams.delete(out);
    if (streams.size === 0) {
      clearInterval(timer);
      keepAliveGroups.delete(intervalMs);
    }
  };
}
