/**
 * The checks of the control routes that take whole documents (`POST
 * /fixtures`, `POST /reset`, `PUT /snapshot`, `POST /actions`, the
 * dashboard's `POST /ui/api/tape`), declared once: the routes validate with
 * these schemas, and a large body is checked with the same code in a worker
 * thread (./document-worker.ts) before the route sees it. The check is pure
 * (text in, verdict out, no state), so its verdict is the one the route would
 * reach: a body it refuses is answered with the very error the route gives,
 * and one it passes is handed to the route as the route's own check of the
 * same schema would output it (./document-pieces.ts carries it back).
 */
import * as v from "valibot";
import { SnapshotError, parseSnapshot } from "../core/snapshot.js";
import { checkBody, parseJSONText, type Schema } from "../http/documented-routes.js";
import { documentOrShippedFixture, FixtureError, validateFixtureDocument } from "../scenario-files/load.js";
import { isFixtureName } from "../scenario-files/shipped.js";
import { fixtureDocument } from "./openapi.js";

const snapshotDocument = v.pipe(v.unknown(), v.description("a document from GET /_standin/snapshot; checked by the emulator, which answers 400 with `problems`"));
const resetBody = v.strictObject({ fixture: v.optional(fixtureDocument) });
const actionBody = v.looseObject({ do: v.pipe(v.string(), v.minLength(1), v.description("the action's name; its arguments sit beside it")) });
const tapeDocument = v.pipe(v.unknown(), v.description("a tape (GET /_standin/tape, the file standin replay reads)"));

/** A fixture sent over the control API, checked as the emulator checks it (resolveFixtures names the only one `fixture[0]`). */
function checkFixture(fixture: unknown): void {
  const document = documentOrShippedFixture(fixture);
  // A shipped fixture's name is loaded (and checked) by the emulator: it is a few bytes, not a document.
  if (typeof document === "string" && isFixtureName(document)) return;
  validateFixtureDocument(document, "fixture[0]");
}

interface DocumentCheck {
  readonly body: Schema<unknown>;
  readonly bodyOptional?: boolean;
  /** What the emulator checks of the parsed body before it changes anything (throws FixtureError or SnapshotError). */
  readonly document?: (body: never) => void;
}

export const DOCUMENT_CHECKS = {
  fixture: { body: fixtureDocument, document: checkFixture },
  reset: { body: resetBody, bodyOptional: true, document: ({ fixture }: v.InferOutput<typeof resetBody>) => fixture !== undefined && checkFixture(fixture) },
  snapshot: { body: snapshotDocument, document: (body: unknown) => void parseSnapshot(body) },
  // An action's arguments are checked by its service (the services are not loaded here): only the JSON and `do`.
  action: { body: actionBody },
  // A tape is replayed by a scratch emulator: only the JSON is checked here.
  tape: { body: tapeDocument },
} as const satisfies Record<string, DocumentCheck>;

export type DocumentCheckName = keyof typeof DOCUMENT_CHECKS;

/**
 * What a check concluded: go on, with the body as the route's schema check
 * outputs it (`value`; without it the route parses and checks the text
 * itself), or the error answer the route would give.
 */
export type DocumentVerdict = { ok: true; value?: unknown } | { ok: false; status: 400; body: { error: string; problems?: string[] } };

/**
 * Parses and checks a body as the route named would. Never throws: what it
 * cannot say for sure, it leaves to the route. The checks of the document
 * itself (fixture, snapshot) read the value and change nothing in it
 * (valibot builds its output apart), so `value` is the route schema's output.
 */
export function runDocumentCheck(name: DocumentCheckName, text: string): DocumentVerdict {
  const check: DocumentCheck = DOCUMENT_CHECKS[name];
  try {
    const parsed = check.bodyOptional && text.trim() === "" ? ({ ok: true, value: {} } as const) : parseJSONText(text);
    if (!parsed.ok) return { ok: false, status: 400, body: { error: parsed.error } };
    const checked = checkBody(check.body, parsed.value);
    if (!checked.ok) return { ok: false, status: 400, body: { error: checked.error } };
    check.document?.(checked.value as never);
    return { ok: true, value: checked.value };
  } catch (error) {
    // The bodies the control API's error handler gives these two (src/control/error-response.ts).
    if (error instanceof FixtureError) return { ok: false, status: 400, body: { error: error.oneLine, problems: error.problems } };
    if (error instanceof SnapshotError) return { ok: false, status: 400, body: { error: error.message, problems: error.problems } };
    return { ok: true };
  }
}
