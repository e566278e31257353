// The sessions one ACP connection follows (connection.ts owns one of these). Per session: a cursor
// into its log (follower.ts), the pure mapping's state (updates.ts), the session/prompt waiting for
// its turn.ended, and the permission and question requests open in it and asked of the client
// (hitl.ts). Everything the log says about a followed session passes through `onEvent`, so the
// updates sent, the prompt's answer and what is asked can never disagree with the log.
import type { FastifyBaseLogger } from 'fastify';
import { ApiError } from '../errors.js';
import type { Session } from '../sessions/session.js';
import type { UniversalEvent } from '../schema/events.js';
import { SessionFollower } from './follower.js';
import { askClient, type ClientRequest, type HitlAsk } from './hitl.js';
import type { RpcId, RpcResponse } from './json-rpc.js';
import { promptOutcome } from './requests.js';
import { initialUpdateState, mapEvent, type UpdateState } from './updates.js';

/** A session/prompt waiting for the first turn.ended after `after`. */
export interface WaitingPrompt {
  after: number;
  answer: (result: unknown) => void;
  fail: (err: unknown) => void;
}

export interface Followed {
  session: Session;
  follower: SessionFollower;
  state: UpdateState;
  /** The session/prompt to answer at the first turn.ended after `after`. */
  prompt?: WaitingPrompt;
  /** Permission and question requests seen and not resolved, by id; asked once live. */
  pending: Map<string, HitlAsk>;
  /** Those asked of the client: the id of our request, while it is unanswered. */
  asked: Map<string, RpcId | undefined>;
  /** The message of the last `error` event of the running turn: what a failed prompt says. */
  error?: string;
}

/** What the registry needs of its connection: the way out to the client, and what the client said it takes. */
export interface ClientSide {
  send(message: object): void;
  /** The transport holds more than it should: followers stop reading. */
  full(): boolean;
  /** Sends a request of ours to the client; its id. */
  request(method: string, params: unknown, answer: (response: RpcResponse) => void): RpcId;
  /** Withdraws a request of ours still unanswered ($/cancel_request); nothing for one answered. */
  withdraw(id: RpcId | undefined): void;
  /** The client asked for `_agentwire/event`. */
  wantsEvents(): boolean;
  /** The client takes elicitation forms (`clientCapabilities.elicitation.form`). */
  elicitation(): boolean;
  logger: FastifyBaseLogger;
}

export class FollowedSessions {
  private readonly followed = new Map<string, Followed>();

  constructor(private readonly client: ClientSide) {}

  get(sessionId: string): Followed | undefined {
    return this.followed.get(sessionId);
  }

  all(): IterableIterator<Followed> {
    return this.followed.values();
  }

  clear(): void {
    this.followed.clear();
  }

  /**
   * Stops following a session (session/close): what was asked of the client about it is withdrawn,
   * since nobody waits for the answer now. Returns the prompt that was waiting, for the caller to answer.
   */
  unfollow(sessionId: string): Followed | undefined {
    const followed = this.followed.get(sessionId);
    if (!followed) return undefined;
    this.followed.delete(sessionId);
    followed.follower.stop();
    for (const open of followed.asked.values()) this.client.withdraw(open);
    return followed;
  }

  /** `open`: take what is waiting for an answer from the session (a resume that starts at `after`). */
  follow(session: Session, after: number, open = after > 0): Followed {
    this.followed.get(session.id)?.follower.stop();
    const follower = new SessionFollower(session.log, after, {
      event: (event, live) => this.onEvent(followed, event, live),
      full: () => this.client.full(),
      // The session was deleted or the daemon is stopping: no turn.ended will come.
      closed: () => {
        if (this.followed.get(session.id) === followed) this.followed.delete(session.id);
        followed.prompt?.fail(new ApiError('session_ended', `Session '${session.id}' was deleted, or the daemon is stopping, before the turn ended.`, { sessionId: session.id }));
        delete followed.prompt;
      },
    });
    const followed: Followed = { session, follower, state: initialUpdateState(session.request.title), pending: new Map(), asked: new Map() };
    // A resume starts after its cursor: what is still waiting for an answer may have been asked
    // before it, so it is taken from the session; the replay adds and closes the rest.
    if (open) {
      const requests = session.openRequests();
      for (const data of requests.permissions) followed.pending.set(data.permission_id, { type: 'permission.requested', data });
      for (const data of requests.questions) followed.pending.set(data.question_id, { type: 'question.requested', data });
    }
    this.followed.set(session.id, followed);
    return followed;
  }

  /** Asks the client what it has not been asked yet of what is open. */
  askOpen(f: Followed): void {
    for (const [id, pending] of f.pending) if (!f.asked.has(id)) this.ask(f, id, pending);
  }

  private onEvent(f: Followed, event: UniversalEvent, live: boolean): void {
    const sessionId = f.session.id;
    if (event.type === 'turn.started' && f.prompt && event.sequence > f.prompt.after) f.state = { ...f.state, ownTurn: true };
    const mapped = mapEvent(f.state, event);
    f.state = mapped.state;
    const _meta = { agentwire: { sequence: event.sequence } };
    for (const out of mapped.out) {
      if (out.kind === 'update') this.client.send({ jsonrpc: '2.0', method: 'session/update', params: { sessionId, update: out.update, _meta } });
      else if (this.client.wantsEvents()) this.client.send({ jsonrpc: '2.0', method: '_agentwire/event', params: { sessionId, event: out.event, _meta } });
    }
    if (event.type === 'error' && f.prompt && event.sequence > f.prompt.after) f.error = event.data.message;
    if (event.type === 'permission.requested') f.pending.set(event.data.permission_id, event);
    else if (event.type === 'question.requested') f.pending.set(event.data.question_id, event);
    else if (event.type === 'permission.resolved' || event.type === 'question.resolved') {
      const id = event.type === 'permission.resolved' ? event.data.permission_id : event.data.question_id;
      f.pending.delete(id);
      // Answered elsewhere (another client, the policy, a timeout): the client's dialog is withdrawn.
      this.client.withdraw(f.asked.get(id));
      f.asked.delete(id);
    } else if (event.type === 'turn.ended' && f.prompt && event.sequence > f.prompt.after) {
      const { answer, fail } = f.prompt;
      const outcome = promptOutcome(event.data, event.sequence, f.error);
      delete f.prompt;
      delete f.error;
      if ('error' in outcome) fail(outcome.error);
      else answer(outcome.result);
    }
    // Replayed requests are asked only once the replay has caught up and they are still open.
    if (live) this.askOpen(f);
  }

  /** Asks the client; a reply the session no longer takes (answered elsewhere first) is only logged. */
  private ask(f: Followed, id: string, event: HitlAsk): void {
    const request: ClientRequest = (method, params, answer) => {
      f.asked.set(id, this.client.request(method, params, (response) => {
        f.asked.set(id, undefined);
        answer(response);
      }));
    };
    askClient(f.session, event, this.client.elicitation(), request, (err) => this.client.logger.debug({ err, sessionId: f.session.id }, 'ACP client answer not taken'));
  }
}
