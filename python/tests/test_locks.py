"""A lock handed over and a KV blocking read, through python-consul; time only ever moves on
standin's virtual clock."""

import threading
from datetime import datetime, timedelta, timezone

import consul
import pytest

KEY = "service/leader"


@pytest.fixture
def c(standin, monkeypatch):
    standin.set_env(monkeypatch)
    return consul.Consul()


def test_a_lock_is_handed_over_when_the_holders_session_expires(standin, c):
    a = c.session.create(name="a", ttl=10, lock_delay=15)
    b = c.session.create(name="b", ttl=120, lock_delay=15)
    assert c.kv.put(KEY, "a", acquire=a) is True
    assert c.kv.put(KEY, "b", acquire=b) is False

    # A stops renewing: standin moves the clock timer by timer until the lock is free (2 × TTL).
    met = standin.await_(kv={"key": KEY, "held": False}, within="1m")
    assert met["met"] is True and met["waited"] == "20s"
    assert c.session.info(a)[1] is None

    # Consul's lock-delay refuses B for 15 s after the invalidation, then lets it in.
    assert c.kv.put(KEY, "b", acquire=b) is False
    standin.advance(timedelta(seconds=15))
    assert c.kv.put(KEY, "b", acquire=b) is True
    _, entry = c.kv.get(KEY)
    assert (entry["Session"], entry["Value"], entry["LockIndex"]) == (b, b"b", 2)


def test_await_raises_an_assertion_with_what_it_observed(standin, c):
    a = c.session.create(name="a", ttl=120)
    assert c.kv.put(KEY, "a", acquire=a) is True
    with pytest.raises(AssertionError) as raised:
        standin.await_({"kv": {"key": KEY, "held": False}}, within=60)
    assert raised.value.status == 408
    assert raised.value.body["observed"]["kv"]["Session"] == a
    # The clock stopped at the limit, not past it.
    assert standin.now() == datetime(2026, 1, 1, 0, 1, tzinfo=timezone.utc)


def test_a_blocking_read_wakes_on_the_write(c):
    c.kv.put("config/x", "v1")
    index, _ = c.kv.get("config/x")
    answer = {}
    reader = threading.Thread(target=lambda: answer.update(read=c.kv.get("config/x", index=index, wait="5m")))
    reader.start()
    # Parked or not yet arrived, the reader gets the write: an index past `index` answers at once.
    c.kv.put("config/x", "v2")
    reader.join(60)
    assert not reader.is_alive()
    new_index, entry = answer["read"]
    assert new_index > index and entry["Value"] == b"v2"


@pytest.mark.standin(clock="auto")
def test_a_blocking_read_times_out_on_the_virtual_clock(standin, c):
    # In the auto clock mode, when every open request is a parked blocking query standin jumps to
    # the next due timer: the 10-minute wait ends at once, 10 virtual minutes (plus Consul's jitter,
    # at most wait/16) later, with the index unchanged.
    c.kv.put("config/x", "v1")
    index, _ = c.kv.get("config/x")
    before = standin.now()
    same_index, entry = c.kv.get("config/x", index=index, wait="10m")
    waited = standin.now() - before
    assert same_index == index and entry["Value"] == b"v1"
    assert timedelta(minutes=10) <= waited <= timedelta(minutes=10) * 17 / 16
