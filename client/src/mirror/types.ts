// What the mirror needs from a daemon, and what it tells about its own progress.

/** The fields of a daemon's SessionInfo the mirror reads; the whole object is stored as `info`. */
export interface SessionSummary {
  sessionId: string;
  agent: string;
  status: string;
  ended: boolean;
  /** The session's last sequence. */
  eventCount: number;
  createdAt: string;
  updatedAt: string;
}

/** The envelope fields of a universal event the mirror reads; the whole event is stored. */
export interface MirroredEvent {
  session_id: string;
  sequence: number;
  event_id: string;
  type: string;
  time: string;
}

/** The two calls the mirror makes of a daemon (client-source.ts makes them with the client). */
export interface DaemonSource {
  listSessions(signal: AbortSignal): Promise<SessionSummary[]>;
  /**
   * The session's events after `after`, live; resumes by itself across dropped connections. Ends
   * (or throws) when it cannot go on; the mirror then starts it again from where it got to.
   */
  events(sessionId: string, after: number, signal: AbortSignal): AsyncIterable<MirroredEvent>;
}

/** A daemon to follow: `id` names it in the tables (one id per daemon, for good). */
export interface DaemonTarget {
  id: string;
  baseUrl: string;
  token?: string;
}

export interface DaemonStats {
  id: string;
  /** The last list of its sessions succeeded. */
  up: boolean;
  sessions: number;
  /** Sessions whose events stream is open (or reopening). */
  following: number;
  eventsWritten: number;
  /** Events the daemon's last list counts beyond what is stored, summed over its sessions. */
  lagEvents: number;
  /** Events read and waiting to be written. */
  queued: number;
  /** Events the daemon no longer held when the mirror asked for them (its retention). */
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
