import { type Span, SpanKind, SpanStatusCode, type Tracer } from '@opentelemetry/api';
import { ATTR_DB_OPERATION_NAME, ATTR_DB_QUERY_TEXT, ATTR_DB_SYSTEM_NAME, ATTR_ERROR_TYPE, DB_SYSTEM_NAME_VALUE_POSTGRESQL } from '@opentelemetry/semantic-conventions';
import type { StatementTracer } from '../db/tenant-database.ts';

/** The attribute older backends read for the database (`db.system.name` replaced it). */
const ATTR_DB_SYSTEM = 'db.system';
/** PostgreSQL's SQLSTATE of a failed statement (`23505`): its message may quote values, the code never does. */
const ATTR_DB_RESPONSE_STATUS_CODE = 'db.response.status_code';
const FIRST_WORD = /^\s*([A-Za-z]+)/;

/** The statement's text holds no values (they are bound); a failure's message, which may quote them, is left out too. */
export function statementSpans(tracer: Tracer): StatementTracer {
  return (sql, send) => {
    const span = tracer.startSpan(DB_SYSTEM_NAME_VALUE_POSTGRESQL, { kind: SpanKind.CLIENT });
    if (span.isRecording()) describeStatement(span, sql);
    return send().then(
      (result) => {
        span.end();
        return result;
      },
      (error: unknown) => {
        const code = (error as { code?: unknown } | null)?.code;
        if (typeof code === 'string') span.setAttribute(ATTR_DB_RESPONSE_STATUS_CODE, code);
        span.setAttribute(ATTR_ERROR_TYPE, typeof code === 'string' ? code : error instanceof Error ? error.name : 'error');
        span.setStatus({ code: SpanStatusCode.ERROR });
        span.end();
        throw error;
      },
    );
  };
}

/** Named by its operation (`SELECT`) once the span is known to be recorded: an unsampled request's statements cost no attribute. */
function describeStatement(span: Span, sql: string): void {
  const operation = FIRST_WORD.exec(sql)?.[1]?.toUpperCase();
  if (operation !== undefined) span.updateName(operation);
  span.setAttributes({
    [ATTR_DB_SYSTEM_NAME]: DB_SYSTEM_NAME_VALUE_POSTGRESQL,
    [ATTR_DB_SYSTEM]: DB_SYSTEM_NAME_VALUE_POSTGRESQL,
    [ATTR_DB_QUERY_TEXT]: sql,
    [ATTR_DB_OPERATION_NAME]: operation,
  });
}
