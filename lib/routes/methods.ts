/** The methods a route may declare; a GET route answers HEAD too. */
export const HTTP_METHODS = ['GET', 'POST', 'PUT', 'DELETE'] as const;
export type HttpMethod = (typeof HTTP_METHODS)[number];

/** The methods whose requests carry a body a route reads. */
export function takesBody(method: HttpMethod): boolean {
  return method === 'POST' || method === 'PUT';
}
