// Shared bits of the client scripts: the environment the Go tests pass and one JSON result line.
import { inspect } from 'node:util';

/** The relay and fixture pages, from the environment the Go test sets. */
export const env = {
  http: process.env.TABRELAY_HTTP ?? '',
  cdp: process.env.TABRELAY_CDP ?? '',
  token: process.env.TABRELAY_TOKEN ?? '',
  marker: process.env.PAGE_MARKER ?? '',
  bigURL: process.env.BIG_URL ?? '',
  otherURL: process.env.OTHER_URL ?? '',
};

/**
 * Runs body(out, step) and prints one JSON line: out, plus {error} naming the failed step.
 * @param {(out: Record<string, unknown>, step: (name: string) => void) => Promise<void>} body
 */
export async function run(body) {
  const out = {};
  let current = 'start';
  const timer = setTimeout(() => {
    console.log(JSON.stringify({ ...out, error: `${current}: timed out` }));
    process.exit(1);
  }, Number(process.env.CLIENT_TIMEOUT_MS ?? 90_000));
  try {
    await body(out, (name) => { current = name; });
    clearTimeout(timer);
    console.log(JSON.stringify(out));
    process.exit(0);
  } catch (e) {
    clearTimeout(timer);
    console.log(JSON.stringify({ ...out, error: `${current}: ${e?.stack ?? inspect(e, { depth: 2 })}` }));
    process.exit(1);
  }
}
