import { defineRoutes } from 'spaceport';
import { getOneAccount } from './handlers/accounts.js';
import { heartbeat } from './handlers/heartbeat.js';
import { partnerKey, partnerStatus } from './handlers/partner.js';
import { home } from './handlers/sso-login.js';
import { upload } from './handlers/upload.js';

/**
 * The sample project (SPEC §11): one route of each authentication mode, mounted at
 * `/api/sample/...` and, as the default project, at `/api/project/...`.
 */
export default defineRoutes([
  { method: 'POST', path: '/getOneAccount', skipAuth: true, function: getOneAccount },
  { method: 'GET', path: '/home', skipAuth: true, function: home },
  { method: 'GET', path: '/heartbeat', skipAuth: true, function: heartbeat },
  {
    method: 'POST',
    path: '/upload',
    summary: 'Upload a file',
    description: 'Saves the multipart field `file` under the `uploadDir` setting.',
    function: upload,
    schema: { body: { type: 'object', properties: { file: { type: 'string', format: 'binary', description: 'The file to save.' } } } },
  },
  {
    method: 'GET',
    path: '/partner/status',
    summary: 'Partner status',
    auth: partnerKey,
    security: { type: 'apiKey', in: 'header', name: 'x-api-key', description: 'The `apiKey` setting of the sample (`SAMPLE_API_KEY`).' },
    function: partnerStatus,
  },
]);
