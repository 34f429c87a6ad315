import type { EventEmitter } from 'node:events';
import { PassThrough, type Readable } from 'node:stream';
import type { ServerResponse } from 'node:http';

/** A body written in pieces as `ctx.body`: Koa pipes it with its own back-pressure and error handling. */
export function openBodyStream(response: EventEmitter): PassThrough {
  const body = new PassThrough();
  body.on('drain', () => response.emit('drain'));
  body.on('error', () => {});
  return body;
}

/**
 * Re-emits the socket's `finish` and `close` on the bridged `res`, where piping sources and
 * handlers listen. `pipe` leaves a source paused, its file or socket open, when the response ends
 * first (client gone, HEAD), so it is destroyed then; a failing source goes to `onSourceError`.
 */
export function followSocketEvents(raw: ServerResponse, response: EventEmitter, onSourceError: (error: Error) => void): void {
  const sources = new Set<Readable>();
  const onPipe = (source: Readable) => {
    sources.add(source);
    source.once('error', onSourceError);
  };
  response.on('pipe', onPipe);
  raw.once('finish', () => response.emit('finish'));
  raw.once('close', () => {
    response.off('pipe', onPipe);
    for (const source of sources) {
      if (!source.readableEnded) source.destroy();
    }
    response.emit('close');
  });
}
