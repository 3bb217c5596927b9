/**
 * `GET /_standin/openapi.json`: the control API as an OpenAPI 3.1 document,
 * built from the operations the documented routes recorded
 * (src/http/documented-routes.ts). Request bodies and query parameters are
 * the JSON Schema (draft 2020-12, OpenAPI 3.1's dialect) of the valibot
 * schemas the routes validate with. Checks JSON Schema cannot say (Go
 * durations, instants) are left out: the document never claims more than
 * the route checks, only less.
 */
import { toJsonSchema, toJsonSchemaDefs, type ConversionConfig, type JsonSchema } from "@valibot/to-json-schema";
import * as v from "valibot";
import { fixtureSchema } from "../scenario-files/schema.js";
import type { DocumentedOperation } from "../http/documented-routes.js";
import { packageVersion } from "../package-files.js";

/**
 * A fixture as the control API takes it (`POST /fixtures`, `POST /reset`'s
 * `fixture`): any JSON, handed to the emulator, which validates it against
 * the fixture schema (documented as `Fixture`) or, given a shipped
 * fixture's name, loads it, and answers 400 with every problem in `problems`.
 * A document carries its files' text inline (`hclSource`, `jwks`, `x509`).
 */
const anyFixture = v.unknown();
export const fixtureDocument = v.pipe(
  anyFixture,
  v.description(
    "a fixture document (job files as `hclSource`, key sets as `jwks`/`x509`: no file paths), or a shipped fixture's name; checked by the emulator, which answers 400 with `problems`",
  ),
);

const COMPONENT_SCHEMAS = { Fixture: fixtureSchema };

const TAGS: ReadonlyArray<{ name: string; description: string }> = [
  { name: "state", description: "readiness, reset, fixtures, snapshots and the state hash" },
  { name: "clock", description: "the virtual clock: advance, next timer, pause, idle skipping" },
  { name: "journal", description: "the request and event journals" },
  { name: "scenario", description: "named actions and awaited conditions" },
  { name: "tape", description: "record and replay" },
  { name: "coverage", description: "which product routes the run has hit" },
  { name: "scheduler", description: "scheduler (Nomad) faults and event streams" },
  { name: "registry", description: "registry (Consul) health checks" },
  { name: "echo", description: "echo service tokens and key sets" },
  { name: "meta", description: "this document" },
];

const ERROR_SCHEMA = {
  type: "object",
  properties: {
    error: { type: "string" },
    problems: { type: "array", items: { type: "string" }, description: "every problem, for fixtures and snapshots" },
  },
  required: ["error"],
} as const;

const conversion: ConversionConfig = {
  target: "draft-2020-12",
  // Query counts are strings turned into numbers: describe what the client sends.
  typeMode: "input",
  // Custom checks (Go durations, instants, "at most one key set") have no JSON Schema; the route still runs them.
  errorMode: "ignore",
  definitions: COMPONENT_SCHEMAS,
  overrideRef: ({ referenceId }) => `#/components/schemas/${referenceId}`,
  // What the emulator validates a fixture with (pipes are not overridden, so this is the pipe's inner schema).
  overrideSchema: ({ valibotSchema }) =>
    valibotSchema === anyFixture ? { anyOf: [{ $ref: "#/components/schemas/Fixture" }, { type: "string", description: "a fixture file's path" }] } : undefined,
};

function schemaOf(schema: v.GenericSchema): JsonSchema {
  const { $schema: _dialect, $defs: _defs, ...rest } = toJsonSchema(schema, conversion) as JsonSchema & { $defs?: unknown };
  return rest;
}

export interface OpenApiOptions {
  /** Where the operations' paths are mounted (`/_standin`). */
  prefix: string;
  /** The package version. */
  version?: string;
}

/** The OpenAPI 3.1 document of the given operations. */
export function buildOpenApiDocument(operations: readonly DocumentedOperation[], options: OpenApiOptions): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  const usedTags = new Set<string>();
  for (const operation of operations) {
    const path = operation.path === "/" ? options.prefix : `${options.prefix}${operation.path}`;
    usedTags.add(operation.tag);
    (paths[path] ??= {})[operation.method] = operationObject(operation);
  }
  const { definitions: _definitions, ...config } = conversion;
  const componentSchemas = toJsonSchemaDefs(COMPONENT_SCHEMAS, config) as Record<string, JsonSchema>;
  return {
    openapi: "3.1.0",
    info: {
      title: "standin control API",
      version: options.version ?? packageVersion(),
      description:
        'The control API of standin, served under /_standin on every service port (one shared state). JSON in, JSON out; errors are {"error": "<message>"}. Request bodies and query parameters are generated from the schemas the routes validate with.',
      license: { name: "MIT", identifier: "MIT" },
    },
    servers: [{ url: "/", description: "any of the emulator's service ports" }],
    tags: TAGS.filter((t) => usedTags.has(t.name)).concat([...usedTags].filter((name) => !TAGS.some((t) => t.name === name)).map((name) => ({ name, description: name }))),
    paths,
    components: {
      schemas: { Error: ERROR_SCHEMA, ...componentSchemas },
      securitySchemes: {
        controlToken: { type: "http", scheme: "bearer", description: "needed on every control route when standin runs with --control-token; otherwise none" },
      },
    },
    // Either no credentials (the default) or the control token.
    security: [{}, { controlToken: [] }],
  };
}

function operationObject(operation: DocumentedOperation): Record<string, unknown> {
  const parameters: Record<string, unknown>[] = operation.params.map((p) => ({
    name: p.name,
    in: "path",
    required: true,
    ...(p.description ? { description: p.description } : {}),
    schema: { type: "string" },
  }));
  if (operation.query) {
    const query = schemaOf(operation.query) as { properties?: Record<string, JsonSchema & { description?: string }>; required?: string[] };
    for (const [name, schema] of Object.entries(query.properties ?? {})) {
      const { description, ...rest } = schema;
      parameters.push({ name, in: "query", required: query.required?.includes(name) ?? false, ...(description ? { description } : {}), schema: rest });
    }
  }
  const responses: Record<string, unknown> = {};
  for (const [status, description] of Object.entries(operation.responses)) {
    // Client errors are `{error}` (408 and 400s may add fields); 503 is `{ready: false}`.
    const schema = Number(status) >= 400 && Number(status) < 500 ? { schema: { $ref: "#/components/schemas/Error" } } : {};
    responses[status] = { description, content: { "application/json": schema } };
  }
  return {
    operationId: operationId(operation),
    tags: [operation.tag],
    summary: operation.summary,
    ...(operation.description ? { description: operation.description } : {}),
    ...(parameters.length ? { parameters } : {}),
    ...(operation.body ? { requestBody: { required: !operation.bodyOptional, content: { "application/json": { schema: schemaOf(operation.body) } } } } : {}),
    responses,
  };
}

/** `post /clock/advance-to` → `postClockAdvanceTo`; `{id}` → `ById`. */
function operationId(operation: DocumentedOperation): string {
  const words = operation.path
    .split(/[/.-]/)
    .filter(Boolean)
    .map((part) => {
      const param = /^\{(.+)\}$/.exec(part);
      return param ? `By${capital(param[1]!)}` : capital(part);
    });
  return operation.method + words.join("");
}

function capital(word: string): string {
  return word.charAt(0).toUpperCase() + word.slice(1);
}
