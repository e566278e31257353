// The sink a warm spare starts with: what the agent prints before a session adopts it is held
// (bounded) and handed over in order at adoption, so a pooled session sees the same native stream
// as one that started its own agent. It also tells the pool when the spare dies unadopted, and
// whether the adopting session has sent its first turn (the refill waits for that turn's first
// event, which the session reports, so a new agent booting does not compete with it for the CPU).
import type { AgentHandle, AgentSink, ProcessExit, StartOptions } from '../agents/types.js';

/** Native messages a spare may print before its first session; past this it is not a spare. */
const MAX_HELD = 1_000;

type Logger = StartOptions['logger'];

export class SpareRelay implements AgentSink {
  private held: unknown[] | undefined = [];
  private target: AgentSink | undefined;
  private turnSent = false;
  /** The exit of a spare that died before a session took it (the pool's cue to refill). */
  onDeath: (exit: ProcessExit | 'overflow') => void = () => {};
  private log: Logger;
  /** The logger the driver is given: the pool's until adoption, the session's after. */
  readonly logger: Logger;

  constructor(poolLogger: Logger) {
    this.log = poolLogger;
    this.logger = {
      debug: (obj: object, msg?: string) => this.log.debug(obj, msg),
      info: (obj: object, msg?: string) => this.log.info(obj, msg),
      warn: (obj: object, msg?: string) => this.log.warn(obj, msg),
    } as Logger;
  }

  get adopted(): boolean {
    return this.target !== undefined;
  }

  /** The adopting session sent its first turn. */
  get turnStarted(): boolean {
    return this.turnSent;
  }

  native(message: unknown): void {
    if (this.target) return this.target.native(message);
    if (!this.held) return;
    this.held.push(message);
    if (this.held.length > MAX_HELD) {
      this.held = undefined;
      this.onDeath('overflow');
    }
  }

  exit(exit: ProcessExit): void {
    if (this.target) return this.target.exit(exit);
    this.held = undefined;
    this.onDeath(exit);
  }

  /** Hands the spare to a session: what it held first, in order, then everything live. Returns
   *  the handle the session uses (the same agent; `send` marks the first turn). */
  adopt(handle: AgentHandle, sink: AgentSink, logger: Logger): AgentHandle {
    this.log = logger;
    const held = this.held ?? [];
    this.held = undefined;
    this.target = sink;
    for (const message of held) sink.native(message);
    const relay = this;
    return {
      get pid() {
        return handle.pid;
      },
      send: (turn) => {
        relay.turnSent = true;
        return handle.send(turn);
      },
      replyPermission: (id, reply) => handle.replyPermission(id, reply),
      replyQuestion: (id, answers) => handle.replyQuestion(id, answers),
      interrupt: () => handle.interrupt(),
      terminate: () => handle.terminate(),
    };
  }
}
