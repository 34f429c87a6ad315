import { defineRoutes } from 'spaceport';
import { createNote, deleteNote, downloadFile, listNotes, partnerKey, partnerStatus, ping, uploadFile } from './handlers.js';

/** A note as the answers show it. */
const note = {
  type: 'object',
  required: ['id', 'text', 'createdAt'],
  properties: { id: { type: 'string' }, text: { type: 'string' }, createdAt: { type: 'string', format: 'date-time' } },
};

/**
 * The __project__ project: each route answers at /api/__project__<path>. One route of each
 * authentication mode; docs/writing-routes.md explains every field.
 */
export default defineRoutes([
  { method: 'GET', path: '/ping', skipAuth: true, summary: 'Answers anyone: is the project up?', function: ping },
  {
    method: 'POST',
    path: '/notes',
    summary: "Adds a note of the caller's",
    schema: {
      body: {
        type: 'object',
        additionalProperties: false,
        required: ['text'],
        properties: { text: { type: 'string', minLength: 1, maxLength: 500 } },
      },
      responses: { 201: { type: 'object', properties: { success: { const: true }, data: note } } },
    },
    function: createNote,
  },
  {
    method: 'GET',
    path: '/notes',
    summary: "The caller's notes, oldest first",
    // A budget of this route's own, per caller: a logged-in client cannot hammer it (429 past it).
    rateLimit: { max: 30, windowMs: 60_000, by: 'user' },
    schema: {
      responses: { 200: { type: 'object', properties: { success: { const: true }, data: { type: 'array', items: note }, total: { type: 'integer' } } } },
    },
    function: listNotes,
  },
  {
    method: 'DELETE',
    path: '/notes/:id',
    summary: 'Removes a note of the tenant (admins only)',
    schema: { responses: { 200: { type: 'object', properties: { success: { const: true }, deleted: { type: 'integer' } } } } },
    function: deleteNote,
  },
  {
    method: 'POST',
    path: '/files',
    summary: 'Keeps a file (multipart field "file")',
    schema: {
      // A file field is declared as binary: it is checked against the files received.
      body: { type: 'object', required: ['file'], properties: { file: { type: 'string', format: 'binary' } } },
      // Without it, /openapi.json could only say "200: answered by the handler".
      responses: {
        201: { type: 'object', properties: { success: { const: true }, data: { type: 'object', properties: { name: { type: 'string' }, size: { type: 'integer' } } } } },
      },
    },
    function: uploadFile,
  },
  { method: 'GET', path: '/files/:name', summary: 'Sends a kept file back', function: downloadFile },
  {
    method: 'GET',
    path: '/partner/status',
    auth: partnerKey,
    // What partnerKey reads, so that /docs lets a reader type the key ("Authorize") and send it.
    security: { type: 'apiKey', in: 'header', name: 'x-api-key' },
    summary: 'For partners who send the API key',
    function: partnerStatus,
  },
]);
