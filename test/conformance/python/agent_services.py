"""The agent's services and TTL checks with a Python Consul client (Debian's
python3-consul, or python3-consul2 when it is first on PYTHONPATH), against a
running standin; the virtual clock moves through the control API.

Usage: agent_services.py <registry-url> <control-url>
Prints one JSON line per named check: {"check", "ok", "error"}.
"""
import json
import sys
import urllib.parse
import urllib.request

import consul

REGISTRY, CONTROL = sys.argv[1], sys.argv[2]
url = urllib.parse.urlparse(REGISTRY)
c = consul.Consul(host=url.hostname, port=url.port)
# python3-consul 0.7.1 sends the TTL updates and deregistration as GETs, which Consul has answered
# with a 405 since those endpoints became PUT-only; python3-consul2 sends PUTs.
GET_ERA = getattr(consul, "__version__", "") == "0.7.1"


def put(path, params=None):
    """A PUT through the client's own HTTP layer (for the calls python3-consul 0.7.1 sends as GETs)."""
    return c.http.put(consul.base.CB.bool(), path, params=params or {})


def advance(by):
    request = urllib.request.Request(CONTROL + "/_standin/clock/advance", data=json.dumps({"by": by}).encode(), method="POST")
    with urllib.request.urlopen(request) as response:
        assert response.status == 200, response.status


def expect(ok, message):
    if not ok:
        raise AssertionError(message)


def check_register_with_ttl_check():
    expect(c.agent.service.register("api", service_id="api-1", port=9000, tags=["py"], check=consul.Check.ttl("10s")) is True, "register refused")
    services = c.agent.services()
    expect(services.get("api-1", {}).get("Service") == "api" and services["api-1"]["Port"] == 9000 and services["api-1"]["Tags"] == ["py"], "services: %r" % services)
    check = c.agent.checks().get("service:api-1")
    expect(check is not None and check["Status"] == "critical" and check["ServiceName"] == "api" and check["Type"] == "ttl", "check: %r" % check)


def check_ttl_pass_and_lapse():
    if GET_ERA:
        expect(c.agent.check.ttl_pass("service:api-1", notes="up") is False, "a GET to check/pass was accepted (Consul answers 405)")
        expect(c.agent.checks()["service:api-1"]["Status"] == "critical", "a refused GET changed the check")
        expect(put("/v1/agent/check/pass/service:api-1", {"note": "up"}) is True, "PUT check/pass refused")
    else:
        expect(c.agent.check.ttl_pass("service:api-1", notes="up") is True, "ttl_pass refused")
    check = c.agent.checks()["service:api-1"]
    expect(check["Status"] == "passing" and check["Output"] == "up", "after ttl_pass: %r" % check)
    advance("9s")
    expect(c.agent.checks()["service:api-1"]["Status"] == "passing", "critical before its TTL")
    advance("1s")
    check = c.agent.checks()["service:api-1"]
    expect(check["Status"] == "critical" and check["Output"] == "TTL expired (last output before timeout follows): up", "after the TTL: %r" % check)


def ttl_pass(check_id, notes):
    if GET_ERA:
        expect(c.agent.check.ttl_pass(check_id, notes=notes) is False, "a GET to check/pass was accepted (Consul answers 405)")
        expect(put("/v1/agent/check/pass/" + check_id, {"note": notes}) is True, "PUT check/pass refused")
    else:
        expect(c.agent.check.ttl_pass(check_id, notes=notes) is True, "ttl_pass refused")


def check_health_service_passing():
    # Runs after the TTL has lapsed: the instance is there, but not among the passing ones.
    _, everything = c.health.service("api")
    expect([e["Service"]["ID"] for e in everything] == ["api-1"], "health.service: %r" % everything)
    statuses = dict((check["CheckID"], check["Status"]) for check in everything[0]["Checks"])
    expect(statuses.get("service:api-1") == "critical", "checks of the lapsed instance: %r" % statuses)
    _, passing = c.health.service("api", passing=True)
    expect(passing == [], "passing=True with a lapsed TTL: %r" % passing)
    ttl_pass("service:api-1", "back")
    _, passing = c.health.service("api", passing=True)
    expect([e["Service"]["ID"] for e in passing] == ["api-1"], "passing=True after ttl_pass: %r" % passing)
    expect(all(check["Status"] == "passing" for check in passing[0]["Checks"]), "checks after ttl_pass: %r" % passing[0]["Checks"])


def check_deregister():
    if GET_ERA:
        expect(c.agent.service.deregister("api-1") is False, "a GET to service/deregister was accepted (Consul answers 405)")
        expect(put("/v1/agent/service/deregister/api-1") is True, "PUT service/deregister refused")
    else:
        expect(c.agent.service.deregister("api-1") is True, "deregister refused")
    expect(c.agent.services() == {} and c.agent.checks() == {}, "left: %r %r" % (c.agent.services(), c.agent.checks()))


for name, fn in [
    ("register-with-ttl-check", check_register_with_ttl_check),
    ("ttl-pass-and-lapse", check_ttl_pass_and_lapse),
    ("health-service-passing", check_health_service_passing),
    ("deregister", check_deregister),
]:
    try:
        fn()
        print(json.dumps({"check": name, "ok": True}))
    except Exception as error:  # one check's failure must not hide the others'
        print(json.dumps({"check": name, "ok": False, "error": "%s: %s" % (type(error).__name__, error)}))
    sys.stdout.flush()
