// One session's answers to its permission requests and questions, the client's and the daemon's
// own (policy, timeout): checked against the normalizer's pending set, logged, then told to the
// agent. Separate from session.ts, which only forwards the client's replies here.
import type { AgentHandle } from '../agents/types.js';
import { ApiError } from '../errors.js';
import type { PermissionReply } from '../schema/api.js';
import type { UniversalEvent } from '../schema/events.js';
import { HitlPolicyRunner, type HitlSettings } from './hitl-policy.js';
import { nativeHitlId } from './hitl.js';
import type { SessionCore } from './session-parts.js';

/** What the replies need of their session (session.ts builds it). */
export interface HitlRepliesContext extends SessionCore {
  settings: HitlSettings;
  /** The running agent; throws the client's error when the session has ended or has none. */
  live: () => AgentHandle;
  /** The session's budget (budget.ts): its own requests are answered there, not by the agent. */
  budget: { owns(permissionId: string): boolean; reply(permissionId: string, reply: PermissionReply, reason?: string): Promise<void> };
}

export class HitlReplies {
  private readonly policy: HitlPolicyRunner;

  constructor(private readonly ctx: HitlRepliesContext) {
    this.policy = new HitlPolicyRunner(ctx.settings, {
      permission: (id, reply, reason) => this.autoReply(() => this.permission(id, reply, reason), reason),
      question: (id, answers, reason) => this.autoReply(() => this.question(id, answers, reason), reason),
    });
  }

  /** Every event the session logged: the policy answers a request itself, or times it out. */
  observe(event: UniversalEvent): void {
    this.policy.observe(event);
  }

  /** The agent is gone: its requests' timeouts stop. */
  clear(): void {
    this.policy.clear();
  }

  /** `reason` marks a reply the daemon gave itself (policy or timeout) rather than the client. */
  async permission(permissionId: string, reply: PermissionReply, reason?: 'policy' | 'timeout'): Promise<void> {
    const { sessionId, normalizer } = this.ctx;
    if (this.ctx.budget.owns(permissionId) && !normalizer.ended) return this.ctx.budget.reply(permissionId, reply, reason);
    const handle = this.ctx.live();
    const state = normalizer.hitl.permissionState(permissionId);
    if (state !== 'pending') {
      const code = state === 'unknown' ? 'permission_not_found' : 'permission_already_resolved';
      const detail = state === 'unknown' ? `No permission request '${permissionId}' in session '${sessionId}'.` : `Permission '${permissionId}' was already resolved.`;
      throw new ApiError(code, detail, { sessionId, permissionId });
    }
    // Logged before the agent hears it, so the resolution precedes whatever the agent does next.
    this.ctx.apply(normalizer.permissionReplied(permissionId, reply, { reply, ...(reason ? { by: reason } : {}) }, reason));
    await handle.replyPermission(nativeHitlId(permissionId), reply);
  }

  async question(questionId: string, answers: string[][] | null, reason?: 'policy' | 'timeout'): Promise<void> {
    const { sessionId, normalizer } = this.ctx;
    const handle = this.ctx.live();
    const state = normalizer.hitl.questionState(questionId);
    if (state !== 'pending') {
      const code = state === 'unknown' ? 'question_not_found' : 'question_already_resolved';
      const detail = state === 'unknown' ? `No question '${questionId}' in session '${sessionId}'.` : `Question '${questionId}' was already resolved.`;
      throw new ApiError(code, detail, { sessionId, questionId });
    }
    const raw = { ...(answers ? { answers } : { rejected: true }), ...(reason ? { by: reason } : {}) };
    this.ctx.apply(normalizer.questionReplied(questionId, answers, raw));
    await handle.replyQuestion(nativeHitlId(questionId), answers);
  }

  /** A reply the daemon gives itself may race the client's or the turn's end: that is fine. */
  private autoReply(send: () => Promise<void>, reason: string): void {
    send().catch((err: unknown) => {
      if (err instanceof ApiError && err.status < 500) return;
      this.ctx.logger.warn({ err, reason }, 'automatic HITL reply failed');
    });
  }
}
