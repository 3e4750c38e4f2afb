// The benches' command line: `--name=value` flags, read by node's own parser (`util.parseArgs`, not
// strict, so every bench names its flags where it reads them).
import { parseArgs } from 'node:util';

/**
 * The command line's `--name=value` flags as strings: the value is everything after the first `=`
 * (`--child={"a":"b=c"}` keeps its `=`); `--name` alone is `'true'`. Other arguments are ignored.
 */
export function flagArgs(argv = process.argv.slice(2)) {
  const { values } = parseArgs({ args: argv, strict: false, allowPositionals: true });
  return Object.fromEntries(Object.entries(values).map(([name, value]) => [name, String(value)]));
}
