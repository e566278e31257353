// What the mirror needs from a daemon, and what it tells about its own progress.

import type { FeedEntry } from '../types.js';

/** The two calls the mirror makes of a daemon (client-source.ts makes them with the client). */
export interface DaemonSource {
  /** Answers when the daemon is reachable (GET /v1/health); throws otherwise. */
  check(signal: AbortSignal): Promise<void>;
  /**
   * The daemon's feed after `after`, live (GET /v1/events/sse); resumes by itself across dropped
   * connections for a while, then throws, and the mirror starts it again from where it got to.
   */
  feed(after: number, signal: AbortSignal): AsyncIterable<FeedEntry>;
}

/** A daemon to follow: `id` names it in the tables (one id per daemon, for good). */
export interface DaemonTarget {
  id: string;
  baseUrl: string;
  token?: string;
}

export interface DaemonStats {
  id: string;
  /** It answered, and its feed has not failed since. */
  up: boolean;
  /** Its sessions as the feed told them: started, and not deleted. */
  sessions: number;
  /** The feed cursor stored with the last batch written: where the next start resumes. */
  cursor: number;
  eventsWritten: number;
  /** Events read and waiting to be written. */
  queued: number;
  /** Feed entries the daemon no longer held when the mirror asked for them (a --persist off daemon's window). */
  eventsMissed: number;
  lastError: string | null;
}

export interface MirrorStats {
  eventsWritten: number;
  batches: number;
  daemons: DaemonStats[];
}

export interface MirrorLogEntry {
  level: 'info' | 'warn' | 'error';
  msg: string;
  daemon?: string;
  session?: string;
  err?: string;
}
