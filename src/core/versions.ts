/**
 * The product versions standin emulates, declared once: every place that
 * reports a version (agent self, member tags, node attributes) reads these.
 *
 * Nomad 1.9.7: the release whose open `api/` and `jobspec2/` the conformance
 * oracles build from (../shared/oracle-sources), so standin's answers are
 * checked against that release's own code.
 *
 * Consul 2.0.0: the release whose api module (consul/api v1.34.3, published
 * with Consul 2.0.0 from release/2.0.x in May 2026; the 1.22.x line publishes
 * api v1.33.x) the Go checks, the wire-shape oracle and the api/watch plans
 * build from, so the version declared is the one the products' own code
 * judges. docs/known-differences.md states both at its top, with the
 * evidence.
 */
export const NOMAD_VERSION = "1.9.7";
export const CONSUL_VERSION = "2.0.0";
