"""Every argument of ``bradley_terry`` (and of ``mixeval preferences``) is used or refused in every branch:
ties x position x random-effects terms x source (pandas DataFrame, Arrow table counted in DuckDB).

Each cell either fits, and then shows each argument's effect in the result (renamed columns read, the
reference's ability 0, the covariate estimated, the counts summed, the tie model's parameters, the position
term, one variance per random term, the source fit equal to the DataFrame fit), or raises an InputError that
names the argument."""

import json
import warnings

import numpy as np
import pyarrow as pa
import pytest

from mixeval.cli import main
from mixeval.errors import InputError
from mixeval.preferences import bradley_terry, simulate_arena

TIES = ("drop", "davidson", "ordinal")
POSITIONS = ("none", "fixed", "random")
RANDOM = ((), ("prompt",), ("system:prompt",), ("system:judge",))


@pytest.fixture(scope="module")
def log():
    df = simulate_arena(900, np.linspace(-0.8, 0.8, 4), n_judges=4, n_prompts=5, position=0.3, judge_sd=0.4,
                        tie_tau=0.5, random_state=31)
    rng = np.random.default_rng(3)
    df["len_a"], df["len_b"] = rng.normal(0, 1, len(df)), rng.normal(0, 1, len(df))
    df["n"] = np.where(np.arange(len(df)) % 5 == 0, 2, 1)
    return df.rename(columns={"model_a": "first", "model_b": "second", "winner": "verdict"})


def _options(ties, position, random):
    uses_judge = position == "random" or "system:judge" in random
    uses_prompt = any(t in random for t in ("prompt", "system:prompt"))
    return dict(model_a="first", model_b="second", winner="verdict", judge="judge" if uses_judge else None,
                prompt="prompt" if uses_prompt else None, covariates={"length": ("len_a", "len_b")}, count="n",
                ties=ties, position=position, random=random, reference="sys01")


@pytest.mark.parametrize("random", RANDOM, ids=lambda r: "+".join(r) or "no-random")
@pytest.mark.parametrize("position", POSITIONS)
@pytest.mark.parametrize("ties", TIES)
def test_every_argument_is_used_or_refused(log, ties, position, random):
    options = _options(ties, position, random)
    mixed = position == "random" or bool(random)
    if ties == "davidson" and mixed:
        with pytest.raises(InputError, match="ties='davidson' takes no random effects"):
            bradley_terry(log, **options)
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit = bradley_terry(log, **options)
        from_source = bradley_terry(pa.Table.from_pandas(log), **options)
    # source: counted in DuckDB, the same fit
    assert from_source.loglik == pytest.approx(fit.loglik, abs=1e-8)
    np.testing.assert_allclose(from_source.estimates, fit.estimates, atol=1e-7)
    # columns, reference, covariate, counts
    assert fit.systems == ("sys00", "sys01", "sys02", "sys03") and fit.abilities["sys01"] == 0.0
    assert list(fit.covariates.index) == ["length"] and np.isfinite(fit.covariates.se.iloc[0])
    ties_in_log = int(log.n[log.verdict == "tie"].sum())
    assert fit.n_votes == int(log.n.sum()) - (ties_in_log if ties == "drop" else 0)
    # ties
    assert fit.ties == ties
    assert (fit.thresholds is not None) == (ties == "ordinal")
    assert (fit.tie_parameter is not None) == (ties != "drop")
    # position and random terms
    assert (fit.position_bias is None) == (position == "none")
    groups = list(fit.varcorr.group)
    expected = (["judge"] if position == "random" else []) + [
        {"prompt": "prompt", "system:prompt": "system:prompt", "system:judge": "system:judge"}[t] for t in random]
    assert groups == expected
    assert fit.n_params == len(fit.systems) - 1 + (position != "none") + 1 + (ties != "drop") + len(expected)


@pytest.mark.parametrize("position,random,unused", [("fixed", (), "judge"), ("none", ("system:judge",), "prompt"),
                                                    ("random", ("prompt",), None)])
def test_an_unused_judge_or_prompt_column_is_refused(log, position, random, unused):
    options = _options("drop", position, random) | {"judge": "judge", "prompt": "prompt"}
    if unused is None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            bradley_terry(log, **options)
        return
    with pytest.raises(InputError, match=f"{unused}='{unused}' is given but no term of the model uses it"):
        bradley_terry(log, **options)


@pytest.mark.parametrize("ties,position,random", [("ordinal", "random", ()), ("drop", "none", ("system:judge",)),
                                                  ("davidson", "fixed", ()), ("davidson", "random", ())])
def test_cli_flags_reach_the_fit(log, tmp_path, capsys, ties, position, random):
    path = tmp_path / "log.parquet"
    log.to_parquet(path)
    opts = _options(ties, position, random)
    argv = ["preferences", str(path), "--model-a", "first", "--model-b", "second", "--winner", "verdict",
            "--count", "n", "--covariate", "length=len_a,len_b", "--ties", ties, "--position", position,
            "--reference", "sys01", "--json", "--seed", "1"]
    argv += ["--judge", "judge"] if opts["judge"] else []
    argv += ["--prompt", "prompt"] if opts["prompt"] else []
    argv += ["--random", *random] if random else []
    code = main(argv)
    out, err = capsys.readouterr()
    if ties == "davidson" and position == "random":
        assert code == 2 and err.count("\n") == 1 and "davidson" in err
        return
    assert code == 0
    got = json.loads(out)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit = bradley_terry(log, **opts)
    assert got["loglik"] == pytest.approx(fit.loglik, abs=1e-8)
    assert got["abilities"]["sys01"] == 0.0 and got["ties"] == ties and got["position"]["mode"] == position
    assert list(got["covariates"]) == ["length"] and got["random"] == list(random)
