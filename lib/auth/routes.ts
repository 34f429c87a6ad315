import { z } from 'zod';
import { serviceSchema, serviceTraits, type ServiceAreaDeclaration } from '../routes/service-area.ts';
import { loginHandler } from './login.ts';

const requiredString = z.string({ error: (issue) => (issue.input === undefined ? 'is required' : 'must be a string') });

const credentials = z.object({ username: requiredString, password: requiredString.meta({ format: 'password' }) }, { error: 'must be a JSON object' }).meta({ title: 'LoginRequest' });

const loggedIn = z
  .object({
    success: z.literal(true),
    token: z.string().meta({ description: 'A system JWT (HS256).' }),
    expiresIn: z.int().meta({ description: 'Lifetime of the token in seconds.' }),
  })
  .meta({ description: 'Logged in.' });

/** The rate limit comes before the body is read, so every attempt counts, malformed ones included. */
export const loginArea: ServiceAreaDeclaration = {
  segments: ['auth'],
  traits: serviceTraits({ tenant: true }),
  routes: [
    {
      method: 'POST',
      path: '/auth/login',
      auth: 'public',
      rateLimit: { name: 'login', by: 'ip' },
      handler: ({ runtime }) => loginHandler(runtime),
      schema: serviceSchema({ body: credentials, responses: { 200: loggedIn } }),
      operationId: 'login',
      summary: 'Exchange a username and password for a system JWT',
      tags: ['auth'],
      errors: [401],
    },
  ],
};
