const SECONDS_PER_UNIT = { s: 1, m: 60, h: 3600, d: 86_400 } as const;
const DURATION = /^(\d+)([smhd])?$/;

/** The longest token lifetime, 36500 days (as `spaces.trashDays`): `exp`, now plus this, stays a safe integer, which `systemClaimsOf` requires. */
export const LONGEST_DURATION_SECONDS = 36_500 * 86_400;

/** Seconds, or a string with its unit (`"90s"`, `"15m"`, `"12h"`, `"7d"`); undefined below one second (a token would be born expired) or above the longest. */
export function durationSeconds(value: string | number): number | undefined {
  const seconds = typeof value === 'number' ? value : secondsOfText(value);
  return Number.isSafeInteger(seconds) && seconds >= 1 && seconds <= LONGEST_DURATION_SECONDS ? seconds : undefined;
}

function secondsOfText(text: string): number {
  const match = DURATION.exec(text);
  if (match === null) return Number.NaN;
  const unit = (match[2] ?? 's') as keyof typeof SECONDS_PER_UNIT;
  return Number(match[1]) * SECONDS_PER_UNIT[unit];
}
