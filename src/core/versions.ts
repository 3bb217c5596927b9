/**
 * The product versions standin emulates, declared once: every place that
 * reports a version (agent self, member tags, node attributes) reads these.
 *
 * Nomad 1.9.7: the release whose open `api/` and `jobspec2/` the conformance
 * oracles build from (../shared/oracle-sources), so standin's answers are
 * checked against that release's own code.
 *
 * Consul 1.22.0: the newest stable line whose api module the conformance
 * checks can trace (the api/v1.33 releases are cut from release/1.22.x; the
 * consul/api v1.34.3 client the Go checks use talks to it unchanged).
 * docs/known-differences.md states both at its top.
 */
export const NOMAD_VERSION = "1.9.7";
export const CONSUL_VERSION = "1.22.0";
