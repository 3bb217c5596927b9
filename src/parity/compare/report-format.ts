/**
 * What names a parity report document (`standin parity --json`), apart from
 * the code that builds it: the dashboard checks a report by these alone, and
 * must not depend on the replay (which builds an emulator, which serves the
 * dashboard).
 */
export const PARITY_REPORT_FORMAT = "standin-parity-report";
export const PARITY_REPORT_VERSION = 1;
