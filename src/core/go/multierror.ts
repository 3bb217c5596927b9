/**
 * hashicorp/go-multierror's rendering of an error list (format.go), which
 * Nomad's answers carry verbatim: job validation, ACL policy and token
 * problems, unhealthy deployments.
 */

/**
 * go-multierror's ListFormatFunc. A nested multierror is simply its own
 * rendering embedded in the parent's bullet (no extra indentation).
 */
export function formatMultierror(errors: readonly string[]): string {
  if (errors.length === 1) return `1 error occurred:\n\t* ${errors[0]}\n\n`;
  const points = errors.map((e) => `* ${e}`);
  return `${errors.length} errors occurred:\n\t${points.join("\n\t")}\n\n`;
}
