import { Agent, request } from 'node:http';

export interface Answer {
  status: number;
  /** The `Connection` header of the answer (`keep-alive`, `close`, or '' when absent). */
  connection: string;
  body: string;
}

/**
 * One client over at most one keep-alive connection, as a load balancer or a pooled HTTP client
 * holds it: each request reuses the connection while the server keeps it open.
 */
export class KeepAliveClient {
  readonly #agent = new Agent({ keepAlive: true, maxSockets: 1 });
  readonly #origin: URL;

  constructor(origin: string) {
    this.#origin = new URL(origin);
  }

  /** Sends a GET and resolves with the answer; rejects with the socket's error code when none comes. */
  get(pathname: string, headers: Record<string, string> = {}): Promise<Answer> {
    return new Promise((resolve, reject) => {
      const outgoing = request(new URL(pathname, this.#origin), { agent: this.#agent, headers }, (incoming) => {
        const chunks: Buffer[] = [];
        incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
        incoming.on('error', reject);
        incoming.on('end', () =>
          resolve({ status: incoming.statusCode ?? 0, connection: incoming.headers.connection ?? '', body: Buffer.concat(chunks).toString('utf8') }),
        );
      });
      outgoing.on('error', reject);
      outgoing.end();
    });
  }

  /** How many connections the client holds open (0 or 1). */
  openConnections(): number {
    return Object.values(this.#agent.freeSockets).flat().length + Object.values(this.#agent.sockets).flat().length;
  }

  close(): void {
    this.#agent.destroy();
  }
}
