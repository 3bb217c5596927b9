"""The plugin's own tests. They run standin through the plugin as a user would: the plugin comes
from `pip install` (its pytest11 entry point) or `-p standin_pytest.plugin`, and the executable from
STANDIN_BIN (test/conformance/python-plugin.test.ts sets both). test_options.py runs inner pytest
sessions with pytester, to see what the ini file, the marker and the scopes do."""

pytest_plugins = ["pytester"]
