"""A session's TTL on the virtual clock, through python-consul with the addresses the fixture sets."""

from datetime import datetime, timedelta, timezone

import consul

START = datetime(2026, 1, 1, tzinfo=timezone.utc)


def test_a_session_expires_when_the_test_advances_the_clock(standin, monkeypatch):
    standin.set_env(monkeypatch)
    c = consul.Consul()  # python-consul reads CONSUL_HTTP_ADDR
    session = c.session.create(name="leader", ttl=15)

    # Consul keeps a session until twice its TTL.
    fired = standin.advance("29s")["fired"]
    assert fired == []
    assert c.session.info(session)[1]["ID"] == session

    fired = standin.advance(1)["fired"]
    assert [timer["kind"] for timer in fired] == ["registry.session-ttl"]
    assert c.session.info(session)[1] is None
    assert standin.now() == START + timedelta(seconds=30)


def test_each_test_starts_from_the_start_state(standin):
    c = consul.Consul(host=standin.consul_host, port=standin.consul_port)
    assert c.session.list()[1] == []
    assert standin.now() == START
