import type { FastifyBaseLogger } from 'fastify';

type Bindings = Parameters<FastifyBaseLogger['child']>[0];
type ChildOptions = NonNullable<Parameters<FastifyBaseLogger['child']>[1]>;
type LogFn = FastifyBaseLogger['info'];

/**
 * A request's logger (`request.log`) that becomes a real pino child only when something is logged. Making
 * the child runs pino's redaction over its bindings, about 3 % of a poll's CPU, for every request, while
 * at the levels in use most requests log at most their one line at the end (CONTRACT §15). What is
 * written is the same: the child is made from the same parent, bindings and options.
 */
class LazyChildLogger implements FastifyBaseLogger {
  readonly #parent: FastifyBaseLogger;
  readonly #bindings: Bindings;
  readonly #options: ChildOptions;
  #child: FastifyBaseLogger | null = null;

  constructor(parent: FastifyBaseLogger, bindings: Bindings, options: ChildOptions) {
    this.#parent = parent;
    this.#bindings = bindings;
    this.#options = options;
  }

  #real(): FastifyBaseLogger {
    this.#child ??= this.#parent.child(this.#bindings, this.#options);
    return this.#child;
  }

  get level(): string {
    return this.#child?.level ?? (this.#options.level as string | undefined) ?? this.#parent.level;
  }

  set level(level: string) {
    this.#real().level = level;
  }

  readonly fatal: LogFn = (...args: Parameters<LogFn>) => this.#real().fatal(...args);
  readonly error: LogFn = (...args: Parameters<LogFn>) => this.#real().error(...args);
  readonly warn: LogFn = (...args: Parameters<LogFn>) => this.#real().warn(...args);
  readonly info: LogFn = (...args: Parameters<LogFn>) => this.#real().info(...args);
  readonly debug: LogFn = (...args: Parameters<LogFn>) => this.#real().debug(...args);
  readonly trace: LogFn = (...args: Parameters<LogFn>) => this.#real().trace(...args);
  readonly silent: LogFn = (...args: Parameters<LogFn>) => this.#real().silent(...args);

  child(bindings: Bindings, options?: ChildOptions): FastifyBaseLogger {
    return this.#real().child(bindings, options);
  }
}

/** Fastify's `childLoggerFactory`: each request's logger, made real on its first line. */
export function lazyChildLogger(
  parent: FastifyBaseLogger,
  bindings: Bindings,
  options: ChildOptions,
): FastifyBaseLogger {
  return new LazyChildLogger(parent, bindings, options);
}
