import { createServer } from 'node:http';
import express from 'express';
import { HEARTBEAT_PATH, listenFromEnvironment } from './common.ts';

/** The heartbeat handler as an Express 5 route, with nothing else mounted. */
const app = express();
app.get(HEARTBEAT_PATH, (_request, response) => {
  response.send('success');
});

listenFromEnvironment(createServer(app));
