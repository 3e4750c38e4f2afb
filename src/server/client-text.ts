/**
 * Text for a client: the agent's redactor has removed secrets already; this also replaces absolute
 * file paths (`/home/…`, `C:\…`) so that no error or event tells a web client where files live.
 */
export function scrubForClient(text: string, redact: (text: string) => string = (t) => t): string {
  let out = redact(text);
  // Each pattern needs its separator (`/`, `:\`): text without it is not walked by the pattern.
  if (out.includes('/')) out = out.replace(/(^|[\s"'(=:])(\/(?:[\w.@+-]+\/)+[\w.@+-]*)/g, '$1<path>');
  if (out.includes(':\\'))
    out = out.replace(/(^|[\s"'(=:])([A-Za-z]:\\(?:[\w .@+-]+\\)*[\w.@+-]*)/g, '$1<path>');
  return out;
}
