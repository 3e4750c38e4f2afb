/**
 * A cost in USD as the CLI prints it: cents for a dollar and more, four decimals below (a turn on a
 * small model costs fractions of a cent); `unknown` when the model has no price.
 */
export function formatCostUsd(costUsd: number | undefined): string {
  if (costUsd === undefined) return 'unknown';
  return `$${costUsd >= 1 ? costUsd.toFixed(2) : costUsd.toFixed(4)}`;
}
