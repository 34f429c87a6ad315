import type { IncomingMessage } from 'node:http';

type Listener = Parameters<IncomingMessage['on']>[1];
type EventName = string | symbol;

/**
 * The readable-stream half of the bridged `req` (SPEC §10.7): every member is Node's own
 * request's, the one stream the service's body parsers read too. So it tells the truth by
 * construction: a body the service parsed was read to its end (`complete`, `readableEnded`,
 * not `readable`), a body it left alone (a type no parser takes) is still there to read, and a
 * client that went away is `aborted`. Listeners live on Node's request and go with it.
 *
 * What Express middleware reads here: on-finished (`socket`, `complete`, `readable`,
 * `on`/`removeListener`); body-parser 2 and raw-body (`pipe`, `unpipe`, `pause`, `resume`,
 * `readable`, the events, `_readableState`'s encoding); multer 2 (`pipe`, `unpipe`, `read`,
 * `resume`, `once`, `readable`, `destroyed`, `readableEnded`); Node's `stream.finished` and
 * `pipeline`, which handlers use (`_readableState`, `destroyed`, `closed`, `errored`, `aborted`).
 */
export class RequestStream {
  readonly #incoming: IncomingMessage;

  constructor(incoming: IncomingMessage) {
    this.#incoming = incoming;
  }

  on(event: EventName, listener: Listener): this {
    this.#incoming.on(event, listener);
    return this;
  }

  addListener(event: EventName, listener: Listener): this {
    return this.on(event, listener);
  }

  once(event: EventName, listener: Listener): this {
    this.#incoming.once(event, listener);
    return this;
  }

  prependListener(event: EventName, listener: Listener): this {
    this.#incoming.prependListener(event, listener);
    return this;
  }

  prependOnceListener(event: EventName, listener: Listener): this {
    this.#incoming.prependOnceListener(event, listener);
    return this;
  }

  off(event: EventName, listener: Listener): this {
    this.#incoming.off(event, listener);
    return this;
  }

  removeListener(event: EventName, listener: Listener): this {
    return this.off(event, listener);
  }

  removeAllListeners(event?: EventName): this {
    this.#incoming.removeAllListeners(event);
    return this;
  }

  setMaxListeners(count: number): this {
    this.#incoming.setMaxListeners(count);
    return this;
  }

  emit(event: EventName, ...values: unknown[]): boolean {
    return this.#incoming.emit(event, ...values);
  }

  listeners(event: EventName): ReturnType<IncomingMessage['listeners']> {
    return this.#incoming.listeners(event);
  }

  rawListeners(event: EventName): ReturnType<IncomingMessage['rawListeners']> {
    return this.#incoming.rawListeners(event);
  }

  listenerCount(event: EventName, listener?: Listener): number {
    return this.#incoming.listenerCount(event, listener);
  }

  eventNames(): EventName[] {
    return this.#incoming.eventNames();
  }

  pipe<Destination extends NodeJS.WritableStream>(destination: Destination, options?: { end?: boolean }): Destination {
    return this.#incoming.pipe(destination, options);
  }

  unpipe(destination?: NodeJS.WritableStream): this {
    this.#incoming.unpipe(destination);
    return this;
  }

  pause(): this {
    this.#incoming.pause();
    return this;
  }

  resume(): this {
    this.#incoming.resume();
    return this;
  }

  isPaused(): boolean {
    return this.#incoming.isPaused();
  }

  read(size?: number): Buffer | string | null {
    return this.#incoming.read(size);
  }

  unshift(chunk: Buffer | string, encoding?: BufferEncoding): void {
    this.#incoming.unshift(chunk, encoding);
  }

  setEncoding(encoding: BufferEncoding): this {
    this.#incoming.setEncoding(encoding);
    return this;
  }

  /** Ends the body stream; as with Node's request, a body not fully received also closes the connection. */
  destroy(error?: Error): this {
    this.#incoming.destroy(error);
    return this;
  }

  [Symbol.asyncIterator](): AsyncIterator<Buffer | string> {
    return this.#incoming[Symbol.asyncIterator]();
  }

  get readable(): boolean {
    return this.#incoming.readable;
  }

  get readableEnded(): boolean {
    return this.#incoming.readableEnded;
  }

  get readableFlowing(): boolean | null {
    return this.#incoming.readableFlowing;
  }

  get readableLength(): number {
    return this.#incoming.readableLength;
  }

  get readableEncoding(): BufferEncoding | null {
    return this.#incoming.readableEncoding;
  }

  get readableHighWaterMark(): number {
    return this.#incoming.readableHighWaterMark;
  }

  get readableObjectMode(): boolean {
    return this.#incoming.readableObjectMode;
  }

  get readableAborted(): boolean {
    return this.#incoming.readableAborted;
  }

  get readableDidRead(): boolean {
    return this.#incoming.readableDidRead;
  }

  get destroyed(): boolean {
    return this.#incoming.destroyed;
  }

  get closed(): boolean {
    return this.#incoming.closed;
  }

  get errored(): Error | null {
    return this.#incoming.errored;
  }

  /**
   * Node's own stream state, which has no public equivalent for what readers check here:
   * raw-body refuses a stream whose encoding is set (else it would join strings as Buffers and
   * throw in an event), and `stream.finished`/`pipeline` read the end and close flags.
   */
  get _readableState(): unknown {
    return (this.#incoming as unknown as { _readableState: unknown })._readableState;
  }

  /** The whole message has arrived (its body too, whether or not anything read it). */
  get complete(): boolean {
    return this.#incoming.complete;
  }

  /** The client went away before the message was complete. */
  get aborted(): boolean {
    return this.#incoming.aborted;
  }

  get socket(): IncomingMessage['socket'] {
    return this.#incoming.socket;
  }

  /** The deprecated name of `socket`, which older middleware still reads. */
  get connection(): IncomingMessage['socket'] {
    return this.#incoming.socket;
  }

  get httpVersion(): string {
    return this.#incoming.httpVersion;
  }

  get httpVersionMajor(): number {
    return this.#incoming.httpVersionMajor;
  }

  get httpVersionMinor(): number {
    return this.#incoming.httpVersionMinor;
  }

  get rawHeaders(): string[] {
    return this.#incoming.rawHeaders;
  }

  get trailers(): NodeJS.Dict<string> {
    return this.#incoming.trailers;
  }

  get rawTrailers(): string[] {
    return this.#incoming.rawTrailers;
  }
}
