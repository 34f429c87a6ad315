import type Koa from 'koa';

/**
 * What Express middleware reads of `req.app`/`res.app`: the application's settings. The ones
 * the service has an answer for are the service's own (`trust proxy` is `http.trustProxy`);
 * a route cannot change them (`set` is refused), and there is no other application to mount.
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
  let application = applications.get(app);
  if (application === undefined) {
    application = applicationOf(app);
    applications.set(app, application);
  }
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
