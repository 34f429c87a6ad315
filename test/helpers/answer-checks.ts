import { prototypeChanges, type PrototypeSnapshot } from './prototypes.ts';
import type { RawAnswer, RawOutcome } from './raw-http.ts';

/** A stack frame as V8 prints one, or a source position of the service's own files. */
const STACK_TRACE = /\n\s+at |\bat (?:async )?[\w.<>]+ \((?:file|node):|node:internal|\.ts:\d+:\d+/;

/** The 500 body a sample handler gives for a failure it explains itself (SPEC §7, §11). */
export function isHandlerFailure(answer: RawAnswer): boolean {
  const body = parsedJson(answer.body);
  return answer.status === 500 && body?.success === false && typeof body.message === 'string' && body.message !== 'Internal Server Error';
}

function parsedJson(bytes: Buffer): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(bytes.toString('utf8'));
    return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** SPEC §7: a 4xx or 5xx answer is JSON `{error}` (or a handler's `{success: false, message}`). */
function hasErrorBody(answer: RawAnswer): boolean {
  const body = parsedJson(answer.body);
  const json = (answer.headers.get('content-type') ?? []).some((value) => value.startsWith('application/json'));
  return json && body !== undefined && (typeof body.error === 'string' || (body.success === false && typeof body.message === 'string'));
}

/**
 * Everything wrong with what came back for one request, each as a short category (the same
 * for the same fault, so a run can count them): no answer, a hang, a 5xx the spec does not
 * document, no `X-Request-Id`, an error without its JSON body, a stack trace, a secret.
 */
export function answerProblems(outcome: RawOutcome, options: { head: boolean; secrets: readonly string[] }): string[] {
  const problems: string[] = [];
  if (outcome.timedOut) problems.push('no complete answer and no close within 5 s');
  if (outcome.answers.length === 0 && !outcome.timedOut) problems.push('connection closed without an answer');
  const received = outcome.received.toString('latin1');
  if (STACK_TRACE.test(received)) problems.push('a stack trace in the answer');
  for (const secret of options.secrets) {
    if (received.includes(secret)) problems.push('a secret in the answer');
  }
  for (const [index, answer] of outcome.answers.entries()) {
    if (answer.status >= 500 && !isHandlerFailure(answer)) problems.push(`status ${answer.status}`);
    if (!answer.headers.has('x-request-id')) problems.push(`${answer.status} without X-Request-Id`);
    const bodiless = (options.head && index === 0) || answer.status < 400;
    if (!bodiless && !hasErrorBody(answer)) problems.push(`${answer.status} without a JSON {error} body`);
  }
  return problems;
}

/** What a polluted `Object.prototype` would show on a fresh object, and every change to a built-in prototype since `baseline`. */
export function pollutionProblems(baseline: PrototypeSnapshot): string[] {
  const fresh: Record<string, unknown> = {};
  const problems: string[] = [];
  for (const key of ['polluted', 'isAdmin']) {
    if (fresh[key] !== undefined) problems.push(`({}).${key} is ${String(fresh[key])}`);
  }
  return [...problems, ...prototypeChanges(baseline)];
}
