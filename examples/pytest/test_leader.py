import json
from datetime import datetime, timezone

import consul
import pytest


@pytest.fixture
def c(standin, monkeypatch):
    standin.set_env(monkeypatch)  # NOMAD_ADDR, CONSUL_HTTP_ADDR, … for this test only
    return consul.Consul()        # python-consul reads CONSUL_HTTP_ADDR


def test_node_b_takes_over_when_node_a_fails(standin, c):
    _, leader = c.kv.get("service/leader")
    assert leader["Value"] == b"node-a"

    # The fixture's timeline fails node-a's health check at 2m: its session goes, the lock is free.
    standin.await_(kv={"key": "service/leader", "held": False}, within="5m")
    assert standin.now() == datetime(2026, 1, 1, 0, 2, tzinfo=timezone.utc)

    b = c.session.create(name="node-b", node="node-b", lock_delay=15)
    assert c.kv.put("service/leader", "node-b", acquire=b) is False  # Consul's lock-delay
    standin.advance("15s")
    assert c.kv.put("service/leader", "node-b", acquire=b) is True


def test_every_test_starts_from_the_fixture(standin, c):
    assert standin.now() == datetime(2026, 1, 1, tzinfo=timezone.utc)
    assert c.kv.get("service/leader")[1]["Value"] == b"node-a"


@pytest.mark.standin(fixture="token-expiry", seed=7)  # another shipped world, another seed
def test_the_marker_picks_another_world(standin, c):
    assert c.kv.get("service/leader")[1] is None
    assert json.loads(standin.snapshot())["seed"] == 7
