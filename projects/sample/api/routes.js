import { defineRoutes } from 'spaceport';
import { getOneAccount } from './handlers/accounts.js';
import { heartbeat } from './handlers/heartbeat.js';
import { partnerKey, partnerStatus } from './handlers/partner.js';
import { home } from './handlers/sso-login.js';
import { download, upload } from './handlers/upload.js';

/**
 * The sample project (SPEC §11): one route of each authentication mode, mounted at
 * `/api/sample/...` and, as the default project, at `/api/project/...`.
 */
export default defineRoutes([
  { method: 'POST', path: '/getOneAccount', skipAuth: true, function: getOneAccount },
  { method: 'GET', path: '/home', skipAuth: true, function: home },
  { method: 'GET', path: '/heartbeat', skipAuth: true, function: heartbeat },
  { method: 'POST', path: '/upload', function: upload },
  { method: 'GET', path: '/upload/:name', function: download },
  { method: 'GET', path: '/partner/status', auth: partnerKey, function: partnerStatus },
]);
