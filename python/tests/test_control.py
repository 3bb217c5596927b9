"""The handle's control-API methods, each against what standin answers."""

import json
from datetime import datetime, timedelta, timezone

import consul
import pytest

from standin_pytest import StandinError

START = datetime(2026, 1, 1, tzinfo=timezone.utc)


def test_addresses_and_env(standin):
    assert standin.nomad_addr.startswith("http://127.0.0.1:")
    assert standin.control_url == standin.nomad_addr + "/_standin"
    assert standin.consul_addr == f"127.0.0.1:{standin.consul_port}"
    assert standin.env["NOMAD_ADDR"] == standin.nomad_addr
    assert standin.env["CONSUL_HTTP_ADDR"] == standin.consul_addr
    assert standin.env["STANDIN_ECHO_URL"] == standin.echo_url
    # Three distinct free ports, none of the products' defaults.
    ports = {standin.nomad_addr.rsplit(":", 1)[1], str(standin.consul_port), standin.echo_url.rsplit(":", 1)[1]}
    assert len(ports) == 3 and not ports & {"4646", "8500", "8080"}


def test_advance_takes_seconds_timedeltas_and_go_durations(standin):
    standin.advance(1.5)
    standin.advance(timedelta(minutes=1))
    standin.advance("1h30m")
    assert standin.now() == START + timedelta(hours=1, minutes=31, seconds=1.5)
    standin.advance_to(datetime(2026, 1, 2, tzinfo=timezone.utc))
    assert standin.now() == START + timedelta(days=1)


def test_a_refused_request_raises_standins_error(standin):
    standin.advance("1m")
    with pytest.raises(StandinError) as raised:
        standin.advance_to(START)  # backwards
    assert raised.value.status == 409
    with pytest.raises(StandinError) as raised:
        standin.advance("soon")
    assert raised.value.status == 400 and "soon" in str(raised.value)
    with pytest.raises(TypeError):
        standin.advance(True)


def test_snapshot_and_restore_bring_the_state_back_exactly(standin):
    c = consul.Consul(host=standin.consul_host, port=standin.consul_port)
    c.kv.put("a", "1")
    snapshot, digest = standin.snapshot(), standin.state_hash()
    assert json.loads(snapshot)["format"] == "standin.snapshot/v1"
    c.kv.put("a", "2")
    standin.advance("1h")
    standin.restore(snapshot)
    assert standin.state_hash() == digest
    assert c.kv.get("a")[1]["Value"] == b"1" and standin.now() == START
    with pytest.raises(StandinError) as raised:
        standin.restore(b"{}")
    assert raised.value.status == 400 and standin.state_hash() == digest


def test_apply_fixture_adds_to_the_state_and_reset_takes_it_away(standin):
    c = consul.Consul(host=standin.consul_host, port=standin.consul_port)
    standin.apply_fixture({"registry": {"kv": [{"Key": "feature/flag", "Value": "on"}]}})
    assert c.kv.get("feature/flag")[1]["Value"] == b"on"
    standin.reset()
    assert c.kv.get("feature/flag")[1] is None


def test_tape_records_since_the_last_reset(standin):
    c = consul.Consul(host=standin.consul_host, port=standin.consul_port)
    c.kv.put("taped", "x")
    tape = json.loads(standin.tape())
    assert tape["standinTape"] == 1
    assert "/v1/kv/taped" in json.dumps(tape)


@pytest.mark.standin(fixture="leader-election-failover")
def test_the_marker_names_a_shipped_fixture_and_act_runs_an_action(standin):
    c = consul.Consul(host=standin.consul_host, port=standin.consul_port)
    _, entry = c.kv.get("service/leader")
    assert entry["Value"] == b"node-a" and entry["Session"]
    result = standin.act("check-critical", node="node-a", check="serfHealth")
    assert result["result"]["invalidatedSessions"] == 1
    assert "Session" not in c.kv.get("service/leader")[1]  # Consul leaves it out when unheld
    with pytest.raises(StandinError) as raised:
        standin.act("no-such-action")
    assert raised.value.status == 404


@pytest.mark.standin(seed=7)
def test_the_marker_sets_the_seed(standin):
    assert json.loads(standin.snapshot())["seed"] == 7


def test_reset_with_a_fixture_replaces_the_start_state(standin):
    c = consul.Consul(host=standin.consul_host, port=standin.consul_port)
    standin.reset(fixture={"registry": {"kv": [{"Key": "replaced", "Value": "1"}]}})
    assert c.kv.get("replaced")[1]["Value"] == b"1"
    standin.advance("1m")
    standin.reset()  # back to the replaced start, within this test
    assert c.kv.get("replaced")[1]["Value"] == b"1" and standin.now() == START


def test_the_next_test_does_not_inherit_a_replaced_start(standin):
    c = consul.Consul(host=standin.consul_host, port=standin.consul_port)
    assert c.kv.get("replaced")[1] is None
