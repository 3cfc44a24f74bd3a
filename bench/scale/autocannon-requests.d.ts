// Extends the partial autocannon declaration of `bench/autocannon.d.ts` (ambient module declarations
// merge) with the `requests` option, which `bench/scale` uses to give every request its own API key.
declare module 'autocannon' {
  /** The raw request autocannon is about to serialize; `setupRequest` may return a changed copy. */
  export interface RawRequest {
    method: string;
    path: string;
    headers: Record<string, string>;
    body?: string | Buffer;
  }

  /** One entry of the request sequence a connection cycles through. */
  export interface RequestSpec {
    /** Called before every send of this entry; returning null restarts the sequence. */
    setupRequest?: (request: RawRequest, context: Record<string, unknown>) => RawRequest | null;
  }

  export interface Options {
    requests?: RequestSpec[];
  }
}
