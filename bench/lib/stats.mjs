/**
 * Small summary statistics over lists of samples (milliseconds, usually).
 * Percentiles use the nearest-rank method: the reported value is always a
 * sample that was actually observed, never an interpolation.
 */

export function sorted(samples) {
  return [...samples].sort((a, b) => a - b);
}

export function percentile(samples, p) {
  if (samples.length === 0) return NaN;
  const ordered = sorted(samples);
  const rank = Math.ceil((p / 100) * ordered.length);
  return ordered[Math.min(ordered.length, Math.max(1, rank)) - 1];
}

export function median(samples) {
  if (samples.length === 0) return NaN;
  const ordered = sorted(samples);
  const middle = ordered.length >> 1;
  return ordered.length % 2 ? ordered[middle] : (ordered[middle - 1] + ordered[middle]) / 2;
}

export function max(samples) {
  return samples.length === 0 ? NaN : Math.max(...samples);
}

export function summarize(samples) {
  return { n: samples.length, median: median(samples), p99: percentile(samples, 99), max: max(samples), min: Math.min(...samples) };
}
