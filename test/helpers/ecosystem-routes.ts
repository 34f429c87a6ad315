import { mkdirSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import path from 'node:path';
import basicAuth from 'express-basic-auth';
import compression from 'compression';
import cookieParser from 'cookie-parser';
import cors from 'cors';
import express from 'express';
import { rateLimit } from 'express-rate-limit';
import session from 'express-session';
import bodyParser from 'body-parser';
import { body, query, validationResult } from 'express-validator';
import helmet from 'helmet';
import { createProxyMiddleware, fixRequestBody } from 'http-proxy-middleware';
import createError from 'http-errors';
import jwt from 'jsonwebtoken';
import morgan from 'morgan';
import multer from 'multer';
import onFinished from 'on-finished';
import passport from 'passport';
import { Strategy as BearerStrategy } from 'passport-http-bearer';
import { ExtractJwt, Strategy as JwtStrategy } from 'passport-jwt';
import { Strategy as LocalStrategy } from 'passport-local';
import responseTime from 'response-time';
import { z } from 'zod';
import type { RouteHandler } from '../../lib/bridge/index.ts';
import { listenOnLoopback, type ListeningApp } from './koa-app.ts';
import { scratchFolder } from './scratch.ts';

/**
 * The route file of the ecosystem differential test: Express middleware packages as route
 * authors use them, each composed inside the route's one function by `chain` (as
 * `router.get(path, mw1, mw2, handler)` would run them), served by Express 5 and by the bridge.
 */

// biome-ignore lint/suspicious/noExplicitAny: Express middleware of every package's own types
type Step = (...args: any[]) => unknown;

/** Runs Express-style middleware in order, as an Express route does: `(err, req, res, next)` ones only on an error. */
export function chain(...steps: Step[]): RouteHandler {
  return (req, res, done) => {
    let index = 0;
    const next = (error?: unknown): void => {
      const step = steps[index++];
      const failed = error !== undefined && error !== null;
      if (step === undefined) {
        done(error);
        return;
      }
      if (failed !== (step.length === 4)) {
        next(error);
        return;
      }
      try {
        const result = failed ? step(error, req, res, next) : step(req, res, next);
        if (result instanceof Promise) result.catch(next);
      } catch (thrown) {
        next(thrown);
      }
    };
    next();
  };
}

/** One route of the file: its path under the mount and its composed function. */
export interface EcosystemRoute {
  method: 'get' | 'post' | 'put' | 'delete';
  path: string;
  handler: RouteHandler;
}

const SECRET = 'a-secret-for-tests-only';
const USERS: Record<string, string> = { ada: 'lovelace', grace: 'hopper' };
export const BEARER = 'token-of-ada';
export const SIGNED_JWT = jwt.sign({ sub: 'ada', role: 'admin' }, SECRET, { algorithm: 'HS256', noTimestamp: true });
export const EXPIRED_JWT = jwt.sign({ sub: 'ada', exp: 1_000_000_000 }, SECRET);

const json = (value: unknown): Step => (_req, res) => res.json(value);

/** The files express.static serves: a text file, a larger one, a dotfile and a folder with an index. */
export const STATIC_ROOT = staticFolder();
function staticFolder(): string {
  const root = scratchFolder('ecosystem-static');
  writeFileSync(path.join(root, 'hello.txt'), 'hello from a file\n');
  writeFileSync(path.join(root, 'big.txt'), 'line of a larger file\n'.repeat(200));
  writeFileSync(path.join(root, '.secret'), 'dotfile');
  mkdirSync(path.join(root, 'folder'));
  writeFileSync(path.join(root, 'folder', 'index.html'), '<p>index</p>');
  return root;
}

/** Lines morgan wrote, by app: `express` or `bridge`, told by the `X-App` request header (each line names its URL). */
export const MORGAN_LINES: Record<string, string[]> = { express: [], bridge: [] };

/** The upstream http-proxy-middleware forwards to: it echoes what it received. */
export function startUpstream(): Promise<ListeningApp> {
  return listenOnLoopback(
    createServer((req: IncomingMessage, res: ServerResponse) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        res.setHeader('Content-Type', 'application/json');
        res.end(JSON.stringify({ method: req.method, url: req.url, type: req.headers['content-type'] ?? null, body: Buffer.concat(chunks).toString() }));
      });
    }),
  );
}

let upstreamUrl = '';
export function useUpstream(url: string): void {
  upstreamUrl = url;
}

/** The proxy, made on first use: the upstream's port is known only once it listens. */
function proxied(): Step {
  let proxy: Step | undefined;
  return (req, res, next) => {
    proxy ??= createProxyMiddleware({ target: upstreamUrl, changeOrigin: true, pathRewrite: { '^/proxy': '/upstream' }, on: { proxyReq: fixRequestBody } });
    return proxy(req, res, next);
  };
}

passport.use(new LocalStrategy((username, password, done) => done(null, USERS[username] === password ? { username } : false)));
passport.use(new BearerStrategy((token, done) => done(null, token === BEARER ? { username: 'ada' } : false)));
passport.use(new JwtStrategy({ jwtFromRequest: ExtractJwt.fromAuthHeaderAsBearerToken(), secretOrKey: SECRET }, (payload, done) => done(null, { username: payload.sub, role: payload.role })));

const whoAmI: Step = (req, res) => res.json({ user: req.user });

/** The error middleware of a route: http-errors' status and message, as a JSON body. */
const errorAnswer: Step = (error: createError.HttpError, _req, res, _next) => {
  res.status(error.status ?? 500).json({ failed: error.message, expose: error.expose });
};

const memorySession = () => session({ secret: SECRET, resave: false, saveUninitialized: false, name: 'sid' });

const upload = multer({ storage: multer.memoryStorage() });

const largeJson = { items: Array.from({ length: 100 }, (_, index) => ({ index, name: `item number ${index}` })) };

/** One instance of a stateful middleware per app (the `X-App` request header), made at start: each app its own budget. */
function perApp(make: () => Step): Step {
  const instances: Record<string, Step> = { express: make(), bridge: make() };
  return (req, res, next) => instances[String(req.get('x-app'))]?.(req, res, next);
}

const r = (method: EcosystemRoute['method'], routePath: string, ...steps: Step[]): EcosystemRoute => ({ method, path: routePath, handler: chain(...steps) });

export const ECOSYSTEM_ROUTES: EcosystemRoute[] = [
  // cors
  r('get', '/cors', cors(), json({ ok: true })),
  r('get', '/cors-list', cors({ origin: ['https://a.example', 'https://b.example'], credentials: true, exposedHeaders: ['X-Total'] }), json({ ok: true })),
  r('post', '/cors-list', cors({ origin: 'https://a.example' }), (req: express.Request, res: express.Response) => res.json(req.body)),
  // helmet
  r('get', '/helmet', helmet(), json({ ok: true })),
  r('get', '/helmet-custom', helmet({ contentSecurityPolicy: { directives: { defaultSrc: ["'self'"], imgSrc: ['https://img.example'] } }, frameguard: { action: 'deny' } }), (_req: express.Request, res: express.Response) => res.send('<p>hi</p>')),
  // express-validator
  r(
    'post',
    '/validate',
    body('email').isEmail().normalizeEmail(),
    body('age').isInt({ min: 18 }).toInt(),
    (req: express.Request, res: express.Response) => {
      const result = validationResult(req);
      if (!result.isEmpty()) return res.status(422).json({ errors: result.array() });
      return res.json({ email: req.body.email, age: req.body.age });
    },
  ),
  r('get', '/validate-query', query('page').isInt({ min: 1 }).toInt(), (req: express.Request, res: express.Response) => {
    const result = validationResult(req);
    res.status(result.isEmpty() ? 200 : 400).json(result.isEmpty() ? { page: req.query.page ?? null } : { errors: result.array() });
  }),
  // cookie-parser
  r('get', '/cookies', cookieParser(SECRET), (req: express.Request, res: express.Response) => res.json({ cookies: req.cookies, signed: req.signedCookies })),
  r('get', '/cookies-set', cookieParser(SECRET), (_req: express.Request, res: express.Response) => res.cookie('who', 'ada', { signed: true, httpOnly: true }).cookie('theme', { dark: true }).json({ set: true })),
  // jsonwebtoken
  r('get', '/jwt', (req: express.Request, res: express.Response) => {
    const token = (req.get('authorization') ?? '').replace(/^Bearer /, '');
    try {
      res.json({ claims: jwt.verify(token, SECRET) });
    } catch (error) {
      res.status(401).json({ error: (error as Error).message });
    }
  }),
  r('post', '/jwt-sign', (req: express.Request, res: express.Response) => res.json({ token: jwt.sign({ sub: req.body.user }, SECRET, { noTimestamp: true }) })),
  // zod
  r('post', '/zod', (req: express.Request, res: express.Response) => {
    const parsed = z.object({ name: z.string().min(2), tags: z.array(z.string()).max(3) }).safeParse(req.body);
    if (!parsed.success) return res.status(400).json({ issues: parsed.error.issues.map((issue) => ({ path: issue.path, code: issue.code })) });
    return res.json(parsed.data);
  }),
  // passport
  r('post', '/passport-local', passport.initialize(), passport.authenticate('local', { session: false }), whoAmI),
  r('get', '/passport-bearer', passport.initialize(), passport.authenticate('bearer', { session: false }), whoAmI),
  r('get', '/passport-jwt', passport.initialize(), passport.authenticate('jwt', { session: false }), whoAmI),
  // express-basic-auth
  r('get', '/basic', basicAuth({ users: USERS, challenge: true, realm: 'tests' }), (req: express.Request & { auth?: unknown }, res: express.Response) => res.json({ auth: req.auth })),
  // http-errors and an error middleware
  r('get', '/errors/:status', (req: express.Request) => {
    throw createError(Number(req.params.status), 'made by http-errors');
  }, errorAnswer),
  r('get', '/errors-unhandled/:status', (req: express.Request) => {
    throw createError(Number(req.params.status), 'no error middleware for this one');
  }),
  r('get', '/errors-next', (_req: express.Request, _res: express.Response, next: express.NextFunction) => next(createError(409, 'conflict', { headers: { 'X-Why': 'duplicate' } })), errorAnswer),
  // express-rate-limit (its own store per app: one budget each)
  r('get', '/limited', perApp(() => rateLimit({ windowMs: 60_000, limit: 2, standardHeaders: 'draft-7', legacyHeaders: false })), json({ ok: true })),
  r('get', '/limited-6', perApp(() => rateLimit({ windowMs: 60_000, limit: 1, standardHeaders: 'draft-6', legacyHeaders: true, message: { error: 'slow down' } })), json({ ok: true })),
  // serve-static / express.static (the route's wildcard is the file's path)
  r('get', '/static/*file', (req: express.Request, _res: express.Response, next: express.NextFunction) => {
    req.url = req.url.replace(/^\/static/, '');
    next();
  }, express.static(STATIC_ROOT)),
  // morgan, on-finished, response-time
  r('get', '/morgan', (req: express.Request, res: express.Response, next: express.NextFunction) => {
    const lines = MORGAN_LINES[String(req.get('x-app'))];
    morgan(':method :url :status :res[content-length] HTTP/:http-version :response-time', { stream: { write: (line: string) => lines?.push(line.trim()) } })(req, res, next);
  }, json({ logged: true })),
  r('get', '/on-finished', (_req: express.Request, res: express.Response) => {
    let fired = false;
    onFinished(res, () => {
      fired = true;
    });
    const before = { finished: onFinished.isFinished(res), headersSent: res.headersSent, writableEnded: res.writableEnded };
    setTimeout(() => res.json({ before, firedBeforeAnswer: fired }), 10);
  }),
  r('get', '/on-finished-stream', (_req: express.Request, res: express.Response) => {
    const states: unknown[] = [];
    onFinished(res, () => states.push('finished'));
    res.write('a,');
    states.push({ headersSent: res.headersSent, writableEnded: res.writableEnded, finished: onFinished.isFinished(res) });
    res.end(JSON.stringify(states));
  }),
  r('get', '/morgan-file', (req: express.Request, res: express.Response, next: express.NextFunction) => {
    const lines = MORGAN_LINES[String(req.get('x-app'))];
    morgan(':method :url :status :res[content-length] HTTP/:http-version :response-time', { stream: { write: (line: string) => lines?.push(line.trim()) } })(req, res, next);
  }, (_req: express.Request, res: express.Response) => res.sendFile(path.join(STATIC_ROOT, 'big.txt'))),
  r('get', '/response-time', responseTime(), json({ timed: true })),
  r('get', '/response-time-file', responseTime({ suffix: false }), (_req: express.Request, res: express.Response) => res.sendFile(path.join(STATIC_ROOT, 'hello.txt'))),
  // compression
  r('get', '/compressed-json', compression(), json(largeJson)),
  r('get', '/compressed-small', compression(), json({ small: true })),
  r('get', '/compressed-text', compression(), (_req: express.Request, res: express.Response) => res.type('text').send('compress me '.repeat(300))),
  r('get', '/compressed-stream', compression(), (_req: express.Request, res: express.Response) => {
    res.type('text');
    for (let index = 0; index < 50; index++) res.write(`chunk ${index} of a streamed answer\n`);
    res.end('end\n');
  }),
  r('get', '/compressed-file', compression(), (_req: express.Request, res: express.Response) => res.sendFile(path.join(STATIC_ROOT, 'big.txt'))),
  r('get', '/compressed-redirect', compression(), (_req: express.Request, res: express.Response) => res.redirect(301, '/elsewhere')),
  r('get', '/compressed-error', compression(), (_req: express.Request, _res: express.Response, next: express.NextFunction) => next(createError(418, 'short and stout'))),
  // express-session
  r('get', '/session', memorySession(), (req: express.Request & { session: session.Session & { views?: number } }, res: express.Response) => {
    req.session.views = (req.session.views ?? 0) + 1;
    res.json({ views: req.session.views });
  }),
  r('get', '/session-redirect', memorySession(), (req: express.Request & { session: session.Session & { seen?: boolean } }, res: express.Response) => {
    req.session.seen = true;
    res.redirect('/api/demo/session');
  }),
  // http-proxy-middleware
  r('get', '/proxy/*rest', proxied()),
  r('post', '/proxy/*rest', proxied()),
  r('put', '/proxy/*rest', proxied()),
  // body-parser / express.json() in a route: the body was parsed before the route in both apps
  r('post', '/json-in-route', express.json(), (req: express.Request, res: express.Response) => res.json({ body: req.body, consumed: req.readableEnded })),
  r('post', '/body-parser-json', bodyParser.json(), bodyParser.urlencoded({ extended: true }), (req: express.Request, res: express.Response) => res.json({ body: req.body })),
  r('post', '/urlencoded-in-route', express.urlencoded({ extended: false }), (req: express.Request, res: express.Response) => res.json({ body: req.body })),
  r('post', '/raw-in-route', express.raw({ type: '*/*' }), (req: express.Request, res: express.Response) => res.json({ kind: Buffer.isBuffer(req.body) ? 'buffer' : typeof req.body, body: Buffer.isBuffer(req.body) ? req.body.toString() : req.body })),
  // multer
  r('post', '/multer', upload.single('file'), (req: express.Request, res: express.Response) => {
    const file = req.file ?? (req.files as unknown as Record<string, { name: string; size: number }> | undefined)?.file;
    res.json({ file: file ? { name: 'originalname' in file ? file.originalname : file.name, size: file.size } : null, body: req.body ?? null });
  }),
  r('post', '/multer-json', upload.none(), (req: express.Request, res: express.Response) => res.json({ body: req.body })),
];

/**
 * What every answer goes through, as on-headers, compression and express-session see it: a
 * route that replaces `res.writeHead` and `res.end` marks each call with a header, then answers
 * the way `:kind` names.
 */
const ANSWERS: Record<string, Step> = {
  json: (_req, res) => res.status(201).json({ a: 1 }),
  send: (_req, res) => res.send('some text'),
  redirect: (_req, res) => res.redirect('/elsewhere'),
  sendStatus: (_req, res) => res.sendStatus(202),
  end: (_req, res) => res.end('ended'),
  file: (_req, res) => res.sendFile(path.join(STATIC_ROOT, 'hello.txt')),
  error: (_req, _res, next) => next(createError(400, 'refused')),
};
ECOSYSTEM_ROUTES.push(
  r('get', '/wrapped/:kind', (req: express.Request, res: express.Response, next: express.NextFunction) => {
    const { writeHead, end } = res;
    res.writeHead = function wrappedWriteHead(this: express.Response, ...values: unknown[]) {
      this.setHeader('X-Write-Head', String(values[0]));
      return (writeHead as (...values: unknown[]) => express.Response).apply(this, values);
    } as typeof res.writeHead;
    res.end = function wrappedEnd(this: express.Response, ...values: unknown[]) {
      if (!this.headersSent) this.setHeader('X-End-Saw', typeof values[0] === 'string' || Buffer.isBuffer(values[0]) ? 'a body' : 'no body');
      return (end as (...values: unknown[]) => express.Response).apply(this, values);
    } as typeof res.end;
    ANSWERS[String(req.params.kind)]?.(req, res, next);
  }),
  r('get', '/states', (req: express.Request, res: express.Response) => {
    const states: Record<string, unknown> = {
      implicitHeader: typeof (res as unknown as { _implicitHeader: unknown })._implicitHeader,
      before: [res.headersSent, res.writableEnded, res.finished, res.writableFinished],
      socket: typeof res.socket === 'object' && res.socket !== null && res.connection === res.socket,
      http: [req.httpVersion, req.httpVersionMajor, req.httpVersionMinor],
    };
    res.writeHead(200, { 'Content-Type': 'application/json' });
    states.afterWriteHead = [res.headersSent, res.writableEnded];
    try {
      res.setHeader('X-Late', '1');
    } catch (error) {
      states.setAfterWriteHead = (error as { code?: string }).code;
    }
    res.write('{"states":');
    states.afterWrite = [res.headersSent, res.writableEnded];
    res.end(`${JSON.stringify(states)}}`);
  }),
);

/** A HEAD after `setHeader('Content-Length', n); end()` keeps n (only HEAD is sent here: a GET would promise bytes it never gets). */
ECOSYSTEM_ROUTES.push(
  r('get', '/declared-length', (_req: express.Request, res: express.Response) => {
    res.setHeader('Content-Length', 42);
    res.end();
  }),
);
