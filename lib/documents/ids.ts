import { randomBytes } from 'node:crypto';

const processPart = randomBytes(5).toString('hex');
let counter = randomBytes(3).readUIntBE(0, 3);

/**
 * A new `_id`: 24 hex characters laid out like a MongoDB ObjectId (seconds, a per-process
 * random part, a counter), so ids made by one process sort in creation order.
 */
export function newDocumentId(): string {
  counter = (counter + 1) % 0x1000000;
  const seconds = Math.floor(Date.now() / 1000).toString(16).padStart(8, '0');
  return `${seconds}${processPart}${counter.toString(16).padStart(6, '0')}`;
}
