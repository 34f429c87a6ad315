/** A JSON POST as a caller would send it. */
export function jsonPost(body: unknown, headers: Record<string, string> = {}): RequestInit {
  return { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: typeof body === 'string' ? body : JSON.stringify(body) };
}

/** The three RateLimit-* headers of an answer, as numbers. */
export function limitHeaders(response: Response): { limit: number; remaining: number; reset: number } {
  return {
    limit: Number(response.headers.get('ratelimit-limit')),
    remaining: Number(response.headers.get('ratelimit-remaining')),
    reset: Number(response.headers.get('ratelimit-reset')),
  };
}
