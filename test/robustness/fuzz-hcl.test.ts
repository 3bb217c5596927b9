/**
 * Bad-input fuzzing of HCL job files through POST /v1/jobs/parse: a valid
 * job file cut, spliced and sprinkled with HCL's own punctuation and
 * keywords. Whatever arrives, the answer is 200 with a job or 400 with
 * `Failed to parse job: ` and a diagnostic naming input.hcl (or the empty
 * spec's text) — never a 500, a stack trace or a hang.
 */
import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import { createStandin, type Standin } from "../../src/emulator.js";
import { call } from "../support/call.js";
import { fuzz, timeoutFor } from "./arbitraries.js";

const VALID = `variable "image" {
  type    = string
  default = "nginx:1"
}
locals {
  dcs = [for d in ["dc1", "dc2"] : upper(d)]
}
job "web" {
  datacenters = local.dcs
  meta = { team = "core", n = 1 + 2 }
  group "api" {
    count = 2
    network {
      port "http" { to = 8080 }
    }
    dynamic "service" {
      for_each = ["a", "b"]
      content {
        name = "svc-\${service.value}"
        port = "http"
      }
    }
    task "server" {
      driver = "docker"
      config {
        image = var.image
        args  = ["--port", "\${NOMAD_PORT_http}", "%{ if true }x%{ endif }"]
      }
      template {
        data        = <<-EOT
          a=\${var.image}
          EOT
        destination = "local/a"
      }
    }
  }
}
`;

const PIECES = [
  "{",
  "}",
  "[",
  "]",
  "(",
  ")",
  '"',
  "${",
  "%{",
  "}",
  "~",
  "=",
  "==",
  ",",
  ".",
  "..",
  "...",
  ":",
  "?",
  "\n",
  " ",
  "#",
  "//",
  "/*",
  "*/",
  "<<EOT\n",
  "EOT",
  "\\",
  "$$",
  "for",
  "in",
  "if",
  "else",
  "endif",
  "endfor",
  "dynamic",
  "job",
  "group",
  "task",
  "var.",
  "local.",
  "null",
  "true",
  "-",
  "*",
  "9999999999999999999999",
  "é",
  "\u0000",
];

const mutation = fc.oneof(
  fc.record({ at: fc.nat(VALID.length), cut: fc.nat(40), insert: fc.array(fc.constantFrom(...PIECES), { maxLength: 4 }) }),
  fc.record({ at: fc.nat(VALID.length), cut: fc.constant(0), insert: fc.array(fc.string({ maxLength: 3 }), { maxLength: 3 }) }),
);

describe("HCL job files: mutated input", () => {
  let emu: Standin;
  beforeAll(async () => {
    emu = await createStandin();
  });

  it(
    "always a job or Nomad's 400, never a crash",
    async () => {
      await fuzz(
        fc.asyncProperty(fc.array(mutation, { minLength: 1, maxLength: 3 }), async (mutations) => {
          let text = VALID;
          for (const m of mutations) text = text.slice(0, m.at) + m.insert.join("") + text.slice(m.at + m.cut);
          const res = await call(emu.scheduler, "POST", "/v1/jobs/parse", { JobHCL: text, Canonicalize: mutations.length % 2 === 0 });
          if (res.status === 200) {
            expect(typeof res.body.ID).toBe("string");
            return;
          }
          expect(res.status, res.text).toBe(400);
          expect(res.text === "Job spec is empty" || /^Failed to parse job: (input\.hcl:\d+,\d+-|<nil>: |unable to parse var content: )/.test(res.text), res.text).toBe(true);
          expect(res.text).not.toMatch(/\n\s+at /);
        }),
        2,
      );
    },
    timeoutFor(2, 200),
  );
});
