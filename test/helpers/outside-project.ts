import path from 'node:path';
import { writeTree } from './projects.ts';

/**
 * Two projects in a temporary folder outside the repository: `outside` has its own package.json
 * and a hand-made package in its node_modules; `bare` has neither and is TypeScript.
 */
export function writeOutsideProjects(): { projectsDir: string; outsideRoutes: string } {
  const root = writeTree({
    'projects/outside/package.json': JSON.stringify({ name: 'outside', private: true, type: 'module' }),
    'projects/outside/node_modules/tiny-greeter/package.json': JSON.stringify({ name: 'tiny-greeter', version: '1.0.0', type: 'module', exports: './index.js' }),
    'projects/outside/node_modules/tiny-greeter/index.js': TINY_GREETER,
    'projects/outside/api/routes.js': OUTSIDE_ROUTES,
    'projects/bare/api/routes.ts': BARE_ROUTES,
  }, 'h4-outside');
  const projectsDir = path.join(root, 'projects');
  return { projectsDir, outsideRoutes: path.join(projectsDir, 'outside', 'api', 'routes.js') };
}

const TINY_GREETER = `export function greet(name) {
  return \`hello, \${name}\`;
}
`;

const OUTSIDE_ROUTES = `import { greet } from 'tiny-greeter';
import * as spaceport from 'spaceport';
import configFromModule from 'spaceport/config';

const { db, signToken, verifyToken, config, defineRoutes } = spaceport;
export { spaceport, configFromModule };

function outcome(write) {
  try {
    write();
    return 'written';
  } catch (error) {
    return error.name;
  }
}

export default defineRoutes([
  { method: 'GET', path: '/greeting', skipAuth: true, function: (req, res) => res.json({ greeting: greet(req.query.name) }) },
  { method: 'GET', path: '/config', skipAuth: true, function: (req, res) => res.json({ config, sameObject: config === configFromModule }) },
  {
    method: 'GET',
    path: '/config-writes',
    skipAuth: true,
    function: (req, res) => {
      const attempts = {
        top: outcome(() => { config.port = 1; }),
        nested: outcome(() => { config.limits.jsonBytes = 1; }),
        removal: outcome(() => { delete config.projects; }),
        added: outcome(() => { config.extra = true; }),
      };
      res.json({ attempts, port: config.port, jsonBytes: config.limits.jsonBytes, hasProjects: 'projects' in config });
    },
  },
  {
    method: 'POST',
    path: '/token',
    skipAuth: true,
    function: async (req, res) => {
      const token = await signToken(req.body);
      res.json({ token, claims: verifyToken(token) });
    },
  },
  {
    method: 'GET',
    path: '/verify',
    skipAuth: true,
    function: (req, res) => {
      try {
        res.json({ claims: verifyToken(req.query.token) });
      } catch (error) {
        res.status(401).json({ error: error.name });
      }
    },
  },
  { method: 'GET', path: '/whoami', function: (req, res) => res.json({ uid: req.uid }) },
  {
    method: 'POST',
    path: '/notes',
    skipAuth: true,
    function: async (req, res) => {
      const { insertedId } = await db.collection('h4notes').insertOne({ text: req.body.text });
      res.status(201).json({ insertedId });
    },
  },
  {
    method: 'GET',
    path: '/notes',
    skipAuth: true,
    function: async (req, res) => {
      const notes = await db.collection('h4notes').find({}).toArray();
      res.json({ texts: notes.map((note) => note.text) });
    },
  },
]);
`;

const BARE_ROUTES = `import config from 'spaceport/config';
import { defineRoutes, type Route } from 'spaceport';

const limitAtImport: number = config.limits.jsonBytes;

const limits: Route = {
  method: 'GET',
  path: '/limits',
  skipAuth: true,
  function: (req, res) => res.json({ limitAtImport, limitNow: config.limits.jsonBytes }),
};

export default defineRoutes([limits]);
`;
