import path from 'node:path';
import { create as contentDisposition } from 'content-disposition';
import type { SendFileCallback, SendFileOptions } from './send-file.ts';

/** The `sendFile` call that Express 5's `res.download` makes. */
export interface DownloadCall {
  readonly filePath: string;
  readonly options: SendFileOptions;
  readonly callback: SendFileCallback | undefined;
}

/** Reads `res.download`'s arguments as Express 5 does: options may stand in the filename's place, the callback in either's. */
export function downloadCall(filePath: string, filename: unknown, options: unknown, callback: unknown): DownloadCall {
  let done = typeof callback === 'function' ? (callback as SendFileCallback) : undefined;
  let chosen = options;
  if (typeof filename === 'function') {
    done = filename as SendFileCallback;
    chosen = undefined;
  } else if (typeof options === 'function') {
    done = options as SendFileCallback;
    chosen = undefined;
  }
  const optionsInNamePlace = isOptions(filename) && (typeof options === 'function' || options === undefined);
  if (optionsInNamePlace) chosen = filename;
  const sendOptions: SendFileOptions = isOptions(chosen) ? { ...chosen } : {};
  const name = typeof filename === 'string' && filename !== '' ? filename : filePath;
  sendOptions.headers = { 'Content-Disposition': contentDisposition(path.basename(name)), ...ownHeaders(sendOptions.headers) };
  return { filePath: sendOptions.root ? filePath : path.resolve(filePath), options: sendOptions, callback: done };
}

function ownHeaders(headers: SendFileOptions['headers']): NonNullable<SendFileOptions['headers']> {
  return Object.fromEntries(Object.entries(headers ?? {}).filter(([name]) => name.toLowerCase() !== 'content-disposition'));
}

function isOptions(value: unknown): value is SendFileOptions {
  return value !== null && typeof value === 'object';
}
