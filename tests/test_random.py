"""One seed helper with one behaviour for every ``random_state=`` argument."""

from __future__ import annotations

import numpy as np
import pytest

from mixeval._random import as_generator
from mixeval.errors import InputError, InputTypeError, MixevalError


def test_int_seedsequence_generator_and_none():
    assert as_generator(5).random() == np.random.default_rng(5).random()
    assert as_generator(np.int64(5)).random() == np.random.default_rng(5).random()
    seq = np.random.SeedSequence(9)
    assert as_generator(seq).random() == np.random.default_rng(np.random.SeedSequence(9)).random()
    gen = np.random.default_rng(2)
    assert as_generator(gen) is gen
    assert isinstance(as_generator(None), np.random.Generator)


@pytest.mark.parametrize("bad, error", [(True, InputTypeError), (False, InputTypeError), (np.bool_(True), InputTypeError),
                                        (-1, InputError), (1.5, InputTypeError), ("7", InputTypeError),
                                        (np.random.RandomState(0), InputTypeError)])
def test_everything_else_is_rejected_by_name(bad, error):
    with pytest.raises(error, match="random_state") as info:
        as_generator(bad)
    assert isinstance(info.value, MixevalError)


def test_every_public_random_state_shares_the_helper():
    """The functions that draw reject a bool seed with the same error; the modules hold no other helper."""
    import mixeval._random
    from mixeval.meta import _perturb
    from mixeval.metric_model import _comparisons, _simulate
    from mixeval.resampling import _engine, paired_bootstrap_test
    from mixeval.scale import poisson_weights

    for module in (_perturb, _comparisons, _simulate, _engine):
        assert module.as_generator is mixeval._random.as_generator
    with pytest.raises(InputTypeError, match="bool is not a seed"):
        paired_bootstrap_test([1.0, 2.0, 3.0], [1.0, 1.0, 1.0], random_state=True)
    with pytest.raises(InputTypeError, match="bool is not a seed"):
        poisson_weights(np.arange(3), np.arange(2), True)


def test_validity_and_example_data_seeds_share_the_helper():
    """validity's random_state/seed arguments and the example data go through as_generator (no local copies)."""
    import mixeval._random
    from mixeval.meta import _example_data
    from mixeval.validity import _bias, _circularity, _gam_result, _invariance
    from mixeval.validity import _simulate as validity_simulate
    from mixeval.validity import permissible_transform

    for module in (_bias, _circularity, _gam_result, _invariance, validity_simulate, _example_data):
        assert module.as_generator is mixeval._random.as_generator
        assert not hasattr(module, "_rng")
    with pytest.raises(InputTypeError, match="bool is not a seed"):
        permissible_transform([1, 2, 3], "ordinal", random_state=True)
    with pytest.raises(InputTypeError, match="`seed`"):
        validity_simulate.simulate("max", 10, seed=True)
