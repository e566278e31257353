// Each request's logger (`req.log`, bound to its request id), made only when something logs through
// it. Fastify makes a pino child per request by default, before any hook runs; a pino child is a
// new object with its own serializers and its bindings serialized, and at the default level, info,
// almost no request ever logs (requests are logged at debug only: request-log.ts). The child is
// made on the first call, from the same parent, bindings and options Fastify would have used.
import type { FastifyBaseLogger, FastifyServerOptions } from 'fastify';

type Bindings = Parameters<FastifyBaseLogger['child']>[0];
type ChildOptions = Parameters<FastifyBaseLogger['child']>[1];
type LogFn = FastifyBaseLogger['info'];

class RequestLogger implements FastifyBaseLogger {
  private made: FastifyBaseLogger | undefined;

  constructor(
    private readonly parent: FastifyBaseLogger,
    private readonly bindings: Bindings,
    private readonly options: ChildOptions,
  ) {}

  private get real(): FastifyBaseLogger {
    return (this.made ??= this.parent.child(this.bindings, this.options));
  }

  // Reading the level makes no child: a child's level is its options' or its parent's.
  get level(): FastifyBaseLogger['level'] {
    return this.made?.level ?? this.options?.level ?? this.parent.level;
  }

  set level(level: FastifyBaseLogger['level']) {
    this.real.level = level;
  }

  // Methods on the prototype, not arrow functions per instance: a request must allocate one
  // small object here, not eight.
  fatal(...args: Parameters<LogFn>): void {
    this.real.fatal(...args);
  }
  error(...args: Parameters<LogFn>): void {
    this.real.error(...args);
  }
  warn(...args: Parameters<LogFn>): void {
    this.real.warn(...args);
  }
  info(...args: Parameters<LogFn>): void {
    this.real.info(...args);
  }
  debug(...args: Parameters<LogFn>): void {
    this.real.debug(...args);
  }
  trace(...args: Parameters<LogFn>): void {
    this.real.trace(...args);
  }
  silent(...args: Parameters<LogFn>): void {
    this.real.silent(...args);
  }

  child(bindings: Bindings, options?: ChildOptions): FastifyBaseLogger {
    return this.real.child(bindings, options);
  }
}

/** Fastify's `childLoggerFactory` option. */
export const lazyRequestLoggers: FastifyServerOptions['childLoggerFactory'] = (logger, bindings, options) => new RequestLogger(logger, bindings, options);
