import type { IncomingMessage } from 'node:http';

const STATE = [
  'readable', 'readableEnded', 'readableFlowing', 'readableLength', 'readableEncoding', 'readableHighWaterMark', 'readableObjectMode',
  'readableAborted', 'readableDidRead', 'destroyed', 'closed', 'errored', 'complete', 'aborted', 'socket', 'connection',
  'httpVersion', 'httpVersionMajor', 'httpVersionMinor', 'rawHeaders', 'trailers', 'rawTrailers',
] as const;
/** Methods that answer what Node's request answers. */
const ANSWERING = ['emit', 'listeners', 'rawListeners', 'listenerCount', 'eventNames', 'pipe', 'isPaused', 'read', Symbol.asyncIterator] as const;
/** Methods that answer the stream itself: the bridged `req`, so that calls chain on it. */
const CHAINING = ['on', 'once', 'prependListener', 'prependOnceListener', 'off', 'setMaxListeners', 'unpipe', 'pause', 'resume', 'setEncoding', 'destroy'] as const;
/** Node's other names for `on` and `off`, called through the bridged `req`: middleware that replaces its `on` sees them. */
const ALIASES = { addListener: 'on', removeListener: 'off' } as const;

type Chaining = (typeof CHAINING)[number] | keyof typeof ALIASES;
type Typed = 'read' | typeof Symbol.asyncIterator;

/** The members forwarded to Node's request, typed as Node types them, where that says what they answer. */
export interface RequestStream
  extends Readonly<Pick<IncomingMessage, (typeof STATE)[number]>>,
    Pick<IncomingMessage, Exclude<(typeof ANSWERING)[number], Typed>>,
    Readonly<{ [Name in Chaining]: (...values: Parameters<IncomingMessage[Name]>) => RequestStream }> {
  /**
   * Node's own stream state, which has no public equivalent for what readers check here:
   * raw-body refuses a stream whose encoding is set (else it would join strings as Buffers and
   * throw in an event), and `stream.finished`/`pipeline` read the end and close flags.
   */
  readonly _readableState: unknown;
  read(size?: number): Buffer | string | null;
  [Symbol.asyncIterator](): AsyncIterator<Buffer | string>;
  removeAllListeners(event?: string | symbol): RequestStream;
  unshift(chunk: Buffer | string, encoding?: BufferEncoding): void;
}

/**
 * The readable-stream half of the bridged `req` (SPEC §10.7): Node's own request, which the
 * service's parsers read too, forwarded from the lists above as Koa's `context` delegates. So it
 * tells the truth by construction: a parsed body reads as consumed, an unparsed one is still there.
 *
 * What Express middleware reads here: on-finished (`socket`, `complete`, `readable`,
 * `on`/`removeListener`); body-parser 2 and raw-body (`pipe`, `unpipe`, `pause`, `resume`,
 * `readable`, the events, `_readableState`'s encoding); multer 2 (`pipe`, `unpipe`, `read`,
 * `resume`, `once`, `readable`, `destroyed`, `readableEnded`); Node's `stream.finished` and
 * `pipeline`, which handlers use (`_readableState`, `destroyed`, `closed`, `errored`, `aborted`).
 */
class Forwarder {
  readonly #incoming: IncomingMessage;

  constructor(incoming: IncomingMessage) {
    this.#incoming = incoming;
  }

  static {
    type Method = (...values: unknown[]) => unknown;
    const node = (forwarder: Forwarder) => forwarder.#incoming as unknown as Record<PropertyKey, unknown>;
    const call = (forwarder: Forwarder, name: PropertyKey, values: unknown[]) => Reflect.apply(node(forwarder)[name] as Method, forwarder.#incoming, values);
    const define = (name: PropertyKey, descriptor: PropertyDescriptor) => Object.defineProperty(Forwarder.prototype, name, { configurable: true, ...descriptor });
    const method = (name: PropertyKey, value: (this: Forwarder, ...values: unknown[]) => unknown) => define(name, { writable: true, value });
    for (const name of [...STATE, '_readableState']) define(name, { get: function (this: Forwarder) { return node(this)[name]; } });
    for (const name of ANSWERING) method(name, function (...values) { return call(this, name, values); });
    for (const name of CHAINING) method(name, function (...values) { call(this, name, values); return this; });
    for (const [alias, name] of Object.entries(ALIASES)) method(alias, function (...values) { return Reflect.apply((this as unknown as Record<string, Method>)[name], this, values); });
    // Given one argument always: without a name, Node removes none (all only when given no
    // argument at all), so the listeners the service put on its request stay.
    method('removeAllListeners', function (event) { call(this, 'removeAllListeners', [event]); return this; });
    // Answers nothing, as Node's types say (Node's answers whether more may be pushed).
    method('unshift', function (...values) { call(this, 'unshift', values); });
  }
}

export const RequestStream = Forwarder as unknown as new (incoming: IncomingMessage) => RequestStream;
