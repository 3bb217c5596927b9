"""The ini options, the marker and the three scopes, seen from inner pytest runs (pytester)."""

import sys

if sys.version_info >= (3, 10):
    from importlib.metadata import entry_points

    INSTALLED = any(ep.name == "standin" for ep in entry_points(group="pytest11"))
else:  # pragma: no cover - the plugin needs 3.9 at least
    INSTALLED = False

# Installed with pip, the entry point loads the plugin; from a source tree it is named with -p.
PLUGIN_ARGS = [] if INSTALLED else ["-p", "standin_pytest.plugin"]


def run(pytester, *args):
    return pytester.runpytest(*PLUGIN_ARGS, "-q", *args)


def test_ini_options_set_the_fixture_seed_and_start_time(pytester):
    pytester.makeini(
        """
        [pytest]
        standin_fixture = leader-election-failover
        standin_seed = 9
        standin_start_time = 2030-06-01T12:00:00Z
        """
    )
    pytester.makepyfile(
        """
        import json
        from datetime import datetime, timezone
        def test_it(standin):
            assert standin.now() == datetime(2030, 6, 1, 12, tzinfo=timezone.utc)
            snapshot = json.loads(standin.snapshot())
            assert snapshot["seed"] == 9
            assert "service/leader" in json.dumps(snapshot)
        """
    )
    run(pytester).assert_outcomes(passed=1)


def test_fixture_files_are_found_from_the_root_directory_and_documents_from_the_marker(pytester):
    pytester.makeini("[pytest]\nstandin_fixture = worlds/flags.json\n")
    pytester.mkdir("worlds")
    pytester.path.joinpath("worlds/flags.json").write_text('{"registry": {"kv": [{"Key": "from-file", "Value": "1"}]}}')
    pytester.mkdir("sub")
    pytester.path.joinpath("sub/test_kv.py").write_text(
        """
import json, urllib.request
import pytest

def keys(standin):
    with urllib.request.urlopen(standin.registry_url + "/v1/kv/?keys") as response:
        return json.load(response)

def test_file(standin):
    assert keys(standin) == ["from-file"]

@pytest.mark.standin(fixture=[{"registry": {"kv": [{"Key": "from-marker", "Value": "2"}]}}])
def test_document(standin):
    assert keys(standin) == ["from-marker"]
"""
    )
    run(pytester, "sub").assert_outcomes(passed=2)


def test_the_three_scopes(pytester):
    pytester.makepyfile(
        test_a="""
        import json, urllib.request
        SEEN = {}

        def put(url, key):
            urllib.request.urlopen(urllib.request.Request(url + "/v1/kv/" + key, data=b"x", method="PUT")).read()

        def keys(url):
            try:
                with urllib.request.urlopen(url + "/v1/kv/?keys") as response:
                    return json.load(response)
            except urllib.error.HTTPError as error:
                assert error.code == 404
                return []

        def test_one(standin, standin_module, standin_session):
            put(standin.registry_url, "f"); put(standin_module.registry_url, "m"); put(standin_session.registry_url, "s")
            SEEN.update(f=standin.control_url, m=standin_module.control_url, s=standin_session.control_url)
            assert len(set(SEEN.values())) == 3  # three processes

        def test_two(standin, standin_module, standin_session):
            assert keys(standin.registry_url) == []         # reset before each test
            assert keys(standin_module.registry_url) == ["m"]  # kept within the module
            assert keys(standin_session.registry_url) == ["s"]
            assert standin.control_url == SEEN["f"]          # the same process, reset
            assert standin_module.control_url == SEEN["m"]
        """,
        test_b="""
        import test_a
        def test_three(standin_module, standin_session):
            assert standin_module.control_url != test_a.SEEN["m"]  # a module of its own
            assert standin_session.control_url == test_a.SEEN["s"]  # one for the run
        """,
    )
    run(pytester).assert_outcomes(passed=3)


def test_standin_reuse_false_gives_each_test_its_own_process(pytester):
    pytester.makeini("[pytest]\nstandin_reuse = false\n")
    pytester.makepyfile(
        """
        URLS = []
        def test_one(standin):
            URLS.append(standin.control_url)
        def test_two(standin):
            URLS.append(standin.control_url)
            assert URLS[0] != URLS[1]
        """
    )
    run(pytester).assert_outcomes(passed=2)


def test_a_failed_start_is_an_error_with_standins_one_line_message(pytester):
    pytester.makepyfile(
        """
        import pytest
        @pytest.mark.standin(fixture="no-such-world")
        def test_it(standin):
            pass
        """
    )
    result = run(pytester)
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*standin: no-such-world: no shipped fixture by that name*"])
    result.stdout.no_fnmatch_line("*Traceback*")


def test_an_executable_that_does_not_exist_is_named(pytester):
    pytester.makeini("[pytest]\nstandin_bin = /nowhere/standin\n")
    pytester.makepyfile("def test_it(standin):\n    pass\n")
    result = run(pytester)
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*standin: cannot run /nowhere/standin: No such file or directory*"])


def test_an_unknown_marker_option_is_refused(pytester):
    pytester.makepyfile(
        """
        import pytest
        @pytest.mark.standin(sede=7)
        def test_it(standin):
            pass
        """
    )
    result = run(pytester)
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*@pytest.mark.standin: unknown option sede (options: fixture, seed, *"])


def test_a_control_token_is_sent_by_the_handle(pytester):
    pytester.makepyfile(
        """
        import urllib.request, urllib.error
        import pytest
        @pytest.mark.standin(control_token="s3cret")
        def test_it(standin):
            standin.advance("1m")  # the handle sends the token
            with pytest.raises(urllib.error.HTTPError) as raised:
                urllib.request.urlopen(standin.control_url + "/clock")
            assert raised.value.code == 401
        """
    )
    run(pytester).assert_outcomes(passed=1)


def test_tls_serves_https_with_the_ca_in_ca_file(pytester):
    pytester.makepyfile(
        """
        import consul, os
        import pytest
        @pytest.mark.standin(tls=True)
        def test_it(standin, monkeypatch):
            assert standin.nomad_addr.startswith("https://") and os.path.exists(standin.ca_file)
            standin.set_env(monkeypatch)
            assert os.environ["CONSUL_HTTP_SSL"] == "true"
            c = consul.Consul(verify=standin.ca_file)  # python-consul reads CONSUL_HTTP_ADDR and CONSUL_HTTP_SSL
            session = c.session.create(ttl=10)
            standin.advance("20s")
            assert c.session.info(session)[1] is None
        """
    )
    run(pytester).assert_outcomes(passed=1)


def _without_standin_on_path(pytester, monkeypatch, *scripts):
    """PATH holds only a directory of the given scripts (and `node`'s own directory, which has no
    standin); STANDIN_BIN is unset."""
    import os
    import shutil

    node = shutil.which("node")
    real = os.environ["STANDIN_BIN"]
    bindir = pytester.mkdir("fake-bin")
    for name, body in scripts:
        script = bindir / name
        script.write_text(body.format(node=node, real=real))
        script.chmod(0o755)
    monkeypatch.delenv("STANDIN_BIN")
    monkeypatch.setenv("PATH", f"{bindir}:{os.path.dirname(node)}:/usr/bin:/bin")
    assert shutil.which("standin") in (None, str(bindir / "standin"))


def test_the_executable_is_found_on_path(pytester, monkeypatch):
    _without_standin_on_path(pytester, monkeypatch, ("standin", '#!/bin/sh\necho on-path >> "$0.calls"\nexec {node} {real} "$@"\n'))
    pytester.makepyfile("def test_it(standin):\n    assert standin.now()\n")
    run(pytester).assert_outcomes(passed=1)
    assert (pytester.path / "fake-bin/standin.calls").read_text() == "on-path\n"


def test_npx_is_the_last_resort_and_never_installs(pytester, monkeypatch):
    _without_standin_on_path(
        pytester,
        monkeypatch,
        ("npx", '#!/bin/sh\necho "$1 $2" >> "$0.calls"\n[ "$1 $2" = "--no-install standin" ] || exit 3\nshift 2\nexec {node} {real} "$@"\n'),
    )
    pytester.makepyfile("def test_it(standin):\n    assert standin.now()\n")
    run(pytester).assert_outcomes(passed=1)
    assert (pytester.path / "fake-bin/npx.calls").read_text() == "--no-install standin\n"


def test_markers_merge_from_module_to_class_to_test(pytester):
    pytester.makepyfile(
        """
        import json
        import pytest
        pytestmark = pytest.mark.standin(seed=3, start_time="2031-01-01T00:00:00Z")

        @pytest.mark.standin(seed=4)
        class TestIt:
            @pytest.mark.standin(clock="auto")
            def test_it(self, standin):
                assert json.loads(standin.snapshot())["seed"] == 4           # the class's
                assert standin.now().year == 2031                             # the module's
                assert standin.clock()["mode"] == "auto"                      # the test's
        """
    )
    run(pytester).assert_outcomes(passed=1)


def test_a_start_timeout_that_is_not_a_number_is_a_usage_error(pytester):
    pytester.makeini("[pytest]\nstandin_start_timeout = soon\n")
    pytester.makepyfile("def test_it(standin):\n    pass\n")
    result = run(pytester)
    assert result.ret != 0
    assert "standin_start_timeout: 'soon' is not a number of seconds" in result.stdout.str() + result.stderr.str()
