// Answers permission requests and questions nobody is there to answer, so a headless run never
// hangs: a per-session policy (ask / allow / deny) and an optional timeout. It only decides; the
// session delivers the answer through the same path as a client's reply, tagged with the reason.
import type { UniversalEvent } from '../schema/events.js';

export type PermissionPolicy = 'ask' | 'allow' | 'deny';

export interface HitlSettings {
  policy: PermissionPolicy;
  /** 0: wait for the client forever. */
  timeoutMs: number;
}

export interface HitlActions {
  permission(id: string, reply: 'once' | 'reject', reason: 'policy' | 'timeout'): void;
  /** answers null rejects the question. */
  question(id: string, answers: string[][] | null, reason: 'policy' | 'timeout'): void;
}

export class HitlPolicyRunner {
  private readonly timers = new Map<string, NodeJS.Timeout>();

  constructor(
    private readonly settings: HitlSettings,
    private readonly act: HitlActions,
  ) {}

  observe(event: UniversalEvent): void {
    switch (event.type) {
      case 'permission.requested': {
        const id = event.data.permission_id;
        if (this.settings.policy === 'ask') return this.arm(`p:${id}`, () => this.act.permission(id, 'reject', 'timeout'));
        // A budget is the one limit a daemon that answers for the user must not lift (docs/budgets.md).
        const allow = this.settings.policy === 'allow' && event.data.action !== 'budget';
        // Deferred: the request must be fully logged (and streamed) before its answer.
        return void setImmediate(() => this.act.permission(id, allow ? 'once' : 'reject', 'policy'));
      }
      case 'question.requested': {
        const { question_id: id, options } = event.data;
        if (this.settings.policy === 'ask') return this.arm(`q:${id}`, () => this.act.question(id, null, 'timeout'));
        // Nobody can answer on the user's behalf but the question's own first option.
        const answers = this.settings.policy === 'allow' && options.length > 0 ? [[options[0]!]] : null;
        return void setImmediate(() => this.act.question(id, answers, 'policy'));
      }
      case 'permission.resolved':
        return this.disarm(`p:${event.data.permission_id}`);
      case 'question.resolved':
        return this.disarm(`q:${event.data.question_id}`);
      case 'session.ended':
        return this.clear();
    }
  }

  clear(): void {
    for (const timer of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
  }

  private arm(key: string, fire: () => void): void {
    if (this.settings.timeoutMs <= 0) return;
    const timer = setTimeout(() => {
      this.timers.delete(key);
      fire();
    }, this.settings.timeoutMs);
    timer.unref();
    this.timers.set(key, timer);
  }

  private disarm(key: string): void {
    const timer = this.timers.get(key);
    if (timer) clearTimeout(timer);
    this.timers.delete(key);
  }
}
