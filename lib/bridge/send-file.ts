import { validateHeaderName, validateHeaderValue } from 'node:http';
import path from 'node:path';
import type { Context } from 'koa';
import onFinished from 'on-finished';
import send from 'send';
import { requestPlace, requestState } from '../core/request-state.ts';
import type { NextFunction } from './types.ts';

export interface SendFileOptions extends send.SendOptions {
  /** Headers to add when the file is sent. */
  headers?: Record<string, string | number | string[]>;
}

export type SendFileCallback = (error?: Error) => void;

/** What a file transfer needs from the response it answers. */
export interface FileTransferTarget {
  readonly context: Context;
  /** The bridged response `send` writes into: its `writeHead`/`write`/`end`, so wrappers see the file. */
  readonly response: NodeJS.WritableStream;
  readonly next: NextFunction;
  /** Takes the answer for the file; false when the request was already answered. */
  claim(): boolean;
  /** The transfer failed: before writing anything the handler may answer another way; else the body is cut. */
  release(error: Error): void;
}

/** Express 5's `res.sendFile` on `send`, the library Express itself uses, piping into the bridged response. */
export function transferFile(target: FileTransferTarget, filePath: unknown, options: SendFileOptions, callback?: SendFileCallback): void {
  if (!filePath) throw new TypeError('path argument is required to res.sendFile');
  if (typeof filePath !== 'string') throw new TypeError('path must be a string to res.sendFile');
  if (!options.root && !path.isAbsolute(filePath)) {
    throw new TypeError('path must be absolute or specify root to res.sendFile');
  }
  // Set from a stream event below, where Node's refusal would be uncaught: checked here instead.
  for (const [name, value] of Object.entries(options.headers ?? {})) {
    validateHeaderName(name);
    for (const each of [value].flat()) validateHeaderValue(name, String(each));
  }
  if (!target.claim()) {
    callBackOnceOver(target, callback);
    return;
  }
  const file = send(target.context.req, encodeURI(filePath), { ...options, etag: true });
  followTransfer(target, file, (error) => {
    if (error) warnOfDotSegment(target, filePath, options, error);
    if (error) target.release(error);
    if (callback) runCallback(target, callback, error);
    else afterTransfer(target, error);
  });
  if (options.headers) {
    const headers = options.headers;
    file.on('headers', (response: Context['res']) => {
      for (const [name, value] of Object.entries(headers)) response.setHeader(name, value);
    });
  }
  file.pipe(target.response as Context['res']);
}

/** Express refuses a path with a dot segment as missing (404); the author, whose file may be in `./.data`, is told why. */
function warnOfDotSegment(target: FileTransferTarget, filePath: string, options: SendFileOptions, error: Error & { status?: number }): void {
  if (error.status !== 404 || options.root || (options.dotfiles !== undefined && options.dotfiles !== 'ignore')) return;
  const segment = path
    .resolve(filePath)
    .split(path.sep)
    .find((part) => part.length > 1 && part.startsWith('.'));
  if (segment === undefined) return;
  const state = requestState(target.context);
  state.runtime?.logger.warn(
    { ...requestPlace(state), segment },
    `res.sendFile/res.download answered 404: the path has a segment starting with a dot ("${segment}"), which Express refuses; give the file's name relative to the folder as \`root\`: res.download(name, { root: folder })`,
  );
}

/** A throw from a stream event would end the service (as it would end Express): it fails the handler instead. */
function runCallback(target: FileTransferTarget, callback: SendFileCallback, error: Error | undefined): void {
  try {
    callback(error);
  } catch (thrown) {
    target.next(thrown || new Error('the sendFile callback threw'));
  }
}

/** Without a callback, Express passes every failure but a lost client on to `next`. */
function afterTransfer(target: FileTransferTarget, error: (Error & { code?: string; syscall?: string }) | undefined): void {
  if (!error || error.code === 'ECONNABORTED' || error.syscall === 'write') return;
  if (error.code === 'EISDIR') {
    target.next();
    return;
  }
  // `send` marks a system error, whose text names the server's path, `expose: false`: answered by its status text.
  target.next(error);
}

/** Calls `done` once: when the transfer ends, fails, meets a directory, or loses its client. */
function followTransfer(target: FileTransferTarget, file: send.SendStream, done: (error?: Error & { code?: string }) => void): void {
  let finished = false;
  let streaming: boolean | undefined;
  const finish = (error?: Error & { code?: string }) => {
    if (finished) return;
    finished = true;
    done(error);
  };
  file.on('directory', () => finish(Object.assign(new Error('EISDIR, read'), { code: 'EISDIR' })));
  file.on('end', () => finish());
  file.on('error', (error: Error) => finish(error));
  file.on('file', () => (streaming = false));
  file.on('stream', () => (streaming = true));
  onFinished(target.context.res, (error: (Error & { code?: string }) | null) => {
    if (error?.code === 'ECONNRESET') return finish(aborted());
    if (error) return finish(error);
    setImmediate(() => finish(streaming !== false ? aborted() : undefined));
  });
}

/** A response already over or taken: Express's `send` calls back with ECONNABORTED once it ends, and so does this. */
function callBackOnceOver(target: FileTransferTarget, callback: SendFileCallback | undefined): void {
  if (callback === undefined) return;
  onFinished(target.context.res, () => setImmediate(() => runCallback(target, callback, aborted())));
}

function aborted(): Error & { code: string } {
  return Object.assign(new Error('Request aborted'), { code: 'ECONNABORTED' });
}
