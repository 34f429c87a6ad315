import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { openScratchDatabase } from './harness/database.ts';
import { seedAccounts } from './harness/accounts.ts';
import { serviceSetup } from './harness/service.ts';
import { serviceProjects } from './harness/projects.ts';
import { benchSettings } from './harness/settings.ts';
import { memorySection } from './scenarios/memory.ts';
const settings = benchSettings();
const root = mkdtempSync(path.join(tmpdir(), 'spaceport-bench-'));
const database = await openScratchDatabase();
const usernames = await seedAccounts(database.url, 2000);
const context = { settings, setup: serviceSetup(database.url, root), projectsDir: serviceProjects(root), usernames, progress: () => {} };
for (let i = 0; i < 3; i++) { const s = await memorySection(context); console.log(s.rows[0]?.note); }
await database.drop();
