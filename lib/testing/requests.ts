/** Who a request is sent as: a user of `start()` or `createUser()`, or just a token. */
export interface Caller {
  readonly token: string;
}

/** `fetch`'s options, plus what most requests of a project test need. */
export interface TestRequestInit extends RequestInit {
  /** Sent as the JSON body, with `content-type: application/json`. */
  json?: unknown;
  /** Sends `Authorization: Bearer <token>` of this user (or token). */
  as?: Caller;
  /** The `tenant` header: the test's tenant by default, `null` for none. */
  tenant?: string | null;
}

type Send = (path: string, init?: TestRequestInit) => Promise<Response>;

export interface RequestHelpers {
  /** A request to `path` (`/api/shop/items`) of the service under test. */
  readonly fetch: Send;
  readonly get: Send;
  readonly post: Send;
  readonly put: Send;
  readonly delete: Send;
}

/** Requests bound to the service's URL, carrying the test's tenant unless told otherwise. */
export function requestHelpers(baseUrl: string, defaultTenant: string): RequestHelpers {
  const send: Send = (path, { json, as, tenant = defaultTenant, ...init } = {}) => {
    const headers = new Headers(init.headers);
    if (tenant !== null && !headers.has('tenant')) headers.set('tenant', tenant);
    if (as !== undefined) headers.set('authorization', `Bearer ${as.token}`);
    if (json !== undefined) {
      if (!headers.has('content-type')) headers.set('content-type', 'application/json');
      init.body = JSON.stringify(json);
    }
    return fetch(new URL(path, baseUrl), { ...init, headers });
  };
  const withMethod = (method: string): Send => (path, init) => send(path, { ...init, method });
  return Object.freeze({ fetch: send, get: withMethod('GET'), post: withMethod('POST'), put: withMethod('PUT'), delete: withMethod('DELETE') });
}
