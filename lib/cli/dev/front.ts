import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createProxyServer } from 'http-proxy-3';
import { listenOn } from '../../http/listen.ts';
import { hasBody } from '../../values/has-body.ts';
import type { ServiceInstance } from './instance.ts';

/** How long a request waits for a first instance (or one after a crash) before a 503. */
const WAIT_FOR_INSTANCE_MS = 30_000;
const CLOSE_LIMIT_MS = 2000;

/**
 * `make dev`'s port, held for its whole life: a reload switches instances between two requests,
 * so no connection breaks and no request is lost. While none serves, requests wait for one.
 */
export class DevFront {
  readonly #server: Server;
  readonly #proxy = createProxyServer({ xfwd: true, preserveHeaderKeyCase: true });
  #current: ServiceInstance | undefined;
  #waiting: Array<() => void> = [];

  constructor() {
    this.#server = createServer((request, response) => this.#handle(request, response));
  }

  async listen(port: number, host: string): Promise<string> {
    await listenOn(this.#server, host, port);
    const { port: bound } = this.#server.address() as AddressInfo;
    return `http://${host.includes(':') ? `[${host}]` : host}:${bound}`;
  }

  /** From now on, requests go to `instance` (one that has started); returns the one that served until now. */
  serve(instance: ServiceInstance | undefined): ServiceInstance | undefined {
    const previous = this.#current;
    this.#current = instance;
    if (instance !== undefined) for (const resume of this.#waiting.splice(0)) resume();
    return previous;
  }

  get current(): ServiceInstance | undefined {
    return this.#current;
  }

  /** Stops accepting; connections still busy get a moment to finish their request. */
  close(): Promise<void> {
    return new Promise((resolve) => {
      this.#server.close(() => resolve());
      this.#server.closeIdleConnections();
      setTimeout(() => this.#server.closeAllConnections(), CLOSE_LIMIT_MS).unref();
    });
  }

  async #handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const instance = this.#current ?? (await this.#nextInstance());
    if (instance === undefined) {
      answer(response, 503, 'no instance is running: see the report in the make dev output');
      return;
    }
    instance.track(response);
    let failed = false;
    this.#proxy.web(request, response, { target: instance.url, agent: instance.agent }, (error) => {
      // The proxy reports a later error of the client's request here too, once per attempt.
      if (failed) return;
      failed = true;
      this.#failed(error as NodeJS.ErrnoException, instance, request, response);
    });
  }

  /**
   * A refused connection: the instance closed its listener, stopping on its own. Nothing reached
   * it, so this request waits for the next instance, unless its body, already read, cannot be resent.
   */
  #failed(error: NodeJS.ErrnoException, instance: ServiceInstance, request: IncomingMessage, response: ServerResponse): void {
    if (error.code === 'ECONNREFUSED') {
      if (this.#current === instance) this.#current = undefined;
      if (!hasBody(request)) {
        void this.#handle(request, response);
        return;
      }
    }
    answer(response, 502, 'the development instance did not answer');
  }

  #nextInstance(): Promise<ServiceInstance | undefined> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => resolve(this.#current), WAIT_FOR_INSTANCE_MS);
      this.#waiting.push(() => {
        clearTimeout(timer);
        resolve(this.#current);
      });
    });
  }
}

function answer(response: ServerResponse, status: number, error: string): void {
  if (response.headersSent) {
    response.destroy();
    return;
  }
  response.writeHead(status, { 'content-type': 'application/json; charset=utf-8' });
  response.end(JSON.stringify({ error }));
}
