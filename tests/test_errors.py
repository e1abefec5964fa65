"""The project's exceptions and warnings write numpy scalars as Python values."""

from __future__ import annotations

import warnings

import numpy as np

from mixeval.errors import ColumnError, InputError, MixevalWarning, plain_message


def test_numpy_scalars_in_messages_read_as_python_values():
    exc = InputError(f"constant ({np.float64(1.0)!r}); levels {sorted({np.int64(2), np.int64(1)})}, "
                     f"{[np.str_('A')]}, {np.True_!r}, {np.float32(0.5)!r}")
    assert str(exc) == "constant (1.0); levels [1, 2], ['A'], True, 0.5"
    assert isinstance(ColumnError(repr(np.int64(3))), ValueError) and str(ColumnError(repr(np.int64(3)))) == "3"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        warnings.warn(f"sd {np.float64(0.0)!r}", MixevalWarning)
    assert str(caught[0].message) == "sd 0.0"


def test_text_that_only_looks_like_numpy_is_kept():
    assert plain_message("np.mean(x) and numpy.float64") == "np.mean(x) and numpy.float64"


# ----------------------------------------------------------------------------- where a warning points

import ast  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
from pathlib import Path  # noqa: E402

import pandas as pd  # noqa: E402
import pytest  # noqa: E402

from mixeval.errors import as_flag, cli_words, recorded_warnings  # noqa: E402

PACKAGE = Path(__file__).resolve().parents[1] / "mixeval"
_EQUAL_GROUPS = pd.DataFrame({"y": [1.0, 2, 1.5, 1, 2, 1.5], "g": list("aabbcc")})  # group variance estimated as 0


def test_a_warning_in_a_script_names_the_scripts_line(tmp_path):
    """``python analysis.py``: the singular-fit warning shows ``analysis.py:<line>``, not a file of mixeval."""
    script = tmp_path / "analysis.py"
    script.write_text("import pandas as pd\nfrom mixeval import lmer\n"
                      "df = pd.DataFrame({'y': [1.0, 2, 1.5, 1, 2, 1.5], 'g': list('aabbcc')})\n"
                      "fit = lmer('y ~ 1 + (1|g)', df)\n")
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120,
                          cwd=tmp_path, env={**__import__("os").environ, "PYTHONPATH": str(PACKAGE.parent)})
    assert proc.returncode == 0, proc.stderr
    assert f"{script}:4: SingularFitWarning" in proc.stderr
    assert "mixeval" + __import__("os").sep not in proc.stderr  # no line of the package is shown


def _warned_from(call) -> list[warnings.WarningMessage]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        call()
    return caught


def _few_levels_pairwise():
    from mixeval import Study

    rng = np.random.default_rng(3)
    df = pd.DataFrame([(i, s, r) for i in range(30) for s in "AB" for r in range(3)], columns=["item", "system", "rater"])
    df["score"] = rng.normal(size=30)[df.item] + 3 * rng.normal(size=3)[df.rater] + rng.normal(size=len(df))
    Study(df, "score ~ system + (1|item) + (1|rater)", item="item", system="system").emmeans()


def _undefined_alpha():
    from mixeval.agreement import krippendorff_alpha

    krippendorff_alpha(pd.DataFrame({"r1": [1] * 6, "r2": [1] * 6}), "nominal", level=None)


def _zero_rates():
    from mixeval.metric_model import MetricModel

    MetricModel.from_confusion(tp=80, fp=0, fn=10, tn=890)


@pytest.mark.parametrize("call", [
    lambda: __import__("mixeval").lmer("y ~ 1 + (1|g)", _EQUAL_GROUPS),
    lambda: __import__("mixeval").Study(_EQUAL_GROUPS, "y ~ 1 + (1|g)").fit,
    _few_levels_pairwise, _undefined_alpha, _zero_rates,
], ids=["lmer", "Study.fit", "few-levels", "agreement", "metric-model"])
def test_every_warning_names_the_callers_line_however_deep_it_arises(call):
    caught = [w for w in _warned_from(call) if issubclass(w.category, MixevalWarning)]
    assert caught, "the example no longer warns"
    assert {w.filename for w in caught} == {__file__}


def test_every_warnings_warn_of_the_package_uses_caller_stacklevel():
    """The one rule, checked on the source: ``stacklevel=caller_stacklevel()`` in every ``warnings.warn``."""
    wrong = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "warn"
                    and getattr(node.func.value, "id", "") == "warnings"):
                level = next((k.value for k in node.keywords if k.arg == "stacklevel"), None)
                if not (isinstance(level, ast.Call) and getattr(level.func, "id", "") == "caller_stacklevel"):
                    wrong.append(f"{path.relative_to(PACKAGE.parent)}:{node.lineno}")
    assert wrong == []


def test_a_message_says_an_argument_in_python_and_on_the_command_line():
    advice = as_flag("df='satterthwaite'", "--df satterthwaite")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        warnings.warn(f"few levels; {advice} narrows the gap.", MixevalWarning)
    assert str(caught[0].message) == "few levels; df='satterthwaite' narrows the gap."
    assert cli_words(caught[0].message) == "few levels; --df satterthwaite narrows the gap."
    assert str(InputError(advice)) == "df='satterthwaite'" and cli_words(InputError(advice)) == "--df satterthwaite"


def test_recorded_warnings_are_collected_once_and_passed_on_with_their_place():
    with warnings.catch_warnings(record=True) as shown:
        warnings.simplefilter("always")
        with recorded_warnings() as texts:
            __import__("mixeval").lmer("y ~ 1 + (1|g)", _EQUAL_GROUPS)
            __import__("mixeval").lmer("y ~ 1 + (1|g)", _EQUAL_GROUPS)
    assert len(texts) == 1 and texts[0].startswith("boundary (singular) fit")
    assert [w.filename for w in shown] == [__file__]
