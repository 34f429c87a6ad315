import type Koa from 'koa';

/**
 * What Express middleware reads of `req.app`/`res.app`: the service's own settings (`trust proxy`
 * is `http.trustProxy`), which a route cannot change (no `set`), and no application to mount.
 */
export interface ExpressApplication {
  /** A setting, as Express's `app.get(name)` (one argument) gives it; undefined when the service has none. */
  get(setting: string): unknown;
  enabled(setting: string): boolean;
  disabled(setting: string): boolean;
  /** Application-wide values shared by every request: none here (a project has `res.locals`). */
  readonly locals: Readonly<Record<string, unknown>>;
}

const applications = new WeakMap<Koa, ExpressApplication>();

/** The Express application seen from `app`'s requests, made once per Koa application. */
export function expressApplication(app: Koa): ExpressApplication {
  const application = applications.get(app) ?? applicationOf(app);
  applications.set(app, application);
  return application;
}

function applicationOf(app: Koa): ExpressApplication {
  const settings: Record<string, unknown> = {
    'trust proxy': app.proxy,
    env: app.env,
    etag: 'weak',
    'query parser': 'simple',
    'subdomain offset': 2,
    'x-powered-by': false,
    'case sensitive routing': false,
    'strict routing': false,
  };
  const get = (setting: string) => (Object.hasOwn(settings, setting) ? settings[setting] : undefined);
  return Object.freeze({
    get,
    enabled: (setting: string) => Boolean(get(setting)),
    disabled: (setting: string) => !get(setting),
    locals: Object.freeze(Object.create(null) as Record<string, unknown>),
  });
}
