/** Instants and durations as people read them. */
export function instant(ms: number): string {
  return new Date(ms).toISOString().replace(".000Z", "Z");
}

export function clockTime(ms: number): string {
  return new Date(ms)
    .toISOString()
    .slice(11, 23)
    .replace(/\.000$/, "");
}

export function duration(ms: number): string {
  if (ms < 0) return `-${duration(-ms)}`;
  if (ms < 1000) return `${ms}ms`;
  const total = Math.round(ms / 1000);
  const [hours, minutes, seconds] = [Math.floor(total / 3600), Math.floor((total % 3600) / 60), total % 60];
  return `${hours ? `${hours}h` : ""}${hours || minutes ? `${minutes}m` : ""}${seconds}s`;
}

/** Go duration strings ("15s", "1m30s") in milliseconds; NaN when not one. */
export function goDuration(text: string): number {
  const units: Record<string, number> = { ns: 1e-6, us: 1e-3, µs: 1e-3, ms: 1, s: 1000, m: 60_000, h: 3_600_000 };
  let total = 0;
  let rest = text.trim();
  if (rest === "" || rest === "0") return 0;
  while (rest) {
    const match = /^(\d+(?:\.\d+)?)(ns|us|µs|ms|s|m|h)/.exec(rest);
    if (!match) return Number.NaN;
    total += Number(match[1]) * units[match[2]!]!;
    rest = rest.slice(match[0].length);
  }
  return total;
}

export function short(id: string): string {
  return id.length > 8 ? id.slice(0, 8) : id;
}
