"""Package-level behaviour: lazy exports that stay callable."""

import subprocess
import sys

CHECK = """
import bayesgen
import bayesgen.plotting.report, bayesgen.checks.comparison  # binds the modules
import bayesgen.plotting.report as report_module
import bayesgen.checks.comparison as compare_module
calls = []
report_module.report = lambda *a, **k: calls.append(("report", a, k)) or "index.html"
compare_module.compare = lambda *a, **k: calls.append(("compare", a, k)) or "comparison"
assert bayesgen.report("est", "out", X_test=None) == "index.html"
assert bayesgen.compare("est", z_threshold=3) == "comparison"
assert calls == [("report", ("est", "out"), {"X_test": None}),
                 ("compare", ("est",), {"z_threshold": 3})], calls
print("ok")
"""


def test_report_and_compare_stay_callable_after_their_modules_are_imported():
    done = subprocess.run([sys.executable, "-c", CHECK], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "ok"


def test_unknown_attribute_is_an_attribute_error():
    import bayesgen

    try:
        bayesgen.does_not_exist  # noqa: B018
    except AttributeError as error:
        assert "does_not_exist" in str(error)
    else:
        raise AssertionError("expected AttributeError")
