/**
 * Nomad's CLI tables (ryanuber/columnize as its formatList and formatKV use
 * it): rows of `|`-separated cells, every column but the last padded to its
 * widest cell, joined by two spaces (a list) or by ` = ` (key/value lines).
 */
export function formatList(rows: readonly string[]): string {
  return columnize(rows, "  ");
}

export function formatKV(rows: readonly string[]): string {
  return columnize(rows, " = ");
}

function columnize(rows: readonly string[], glue: string): string {
  const cells = rows.map((row) => row.split("|").map((cell) => cell.trim()));
  const widths: number[] = [];
  for (const row of cells) {
    row.forEach((cell, i) => {
      widths[i] = Math.max(widths[i] ?? 0, cell.length);
    });
  }
  return cells.map((row) => row.map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i]!))).join(glue)).join("\n");
}
