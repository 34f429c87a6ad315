/** Express's `next`: no argument (or `'route'`/`'router'`) continues the chain, anything else fails it. */
export type NextFunction = (error?: unknown) => void;
