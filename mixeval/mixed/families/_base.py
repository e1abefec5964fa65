"""The one protocol of a response distribution (R's ``family`` object, extended as glmmTMB's families).

A :class:`Family` is everything that differs between the models of the one core, so that the engine, the
intervals, the simulation and the layers above (Study, reliability, the command line) ask the family
instead of branching on its name:

- the link (:class:`~._link.Link`: ``linkfun``, ``linkinv``, ``mu_eta`` and the derivatives the Laplace
  approximation needs);
- the response checks (:meth:`Family.check_response`, errors naming the column) and R's start values
  (:meth:`Family.initialize`, :meth:`Family.start_parameters`);
- the conditional log-likelihood and its derivatives in the linear predictor and in the family's own
  parameters (:meth:`Family.loglik`, :meth:`Family.eta_derivatives`,
  :meth:`Family.parameter_derivatives`): PIRLS, the Laplace deviance and its gradient are built on them;
  exponential families with a fixed dispersion (:attr:`Family.exponential`) use lme4's deviance kernel;
- the family's parameters beyond the mean (a dispersion, cutpoints: :attr:`Family.parameter_names`), estimated
  jointly with the variance parameters, reported as glmmTMB reports them (:meth:`Family.dispersion`:
  ``sigma()``);
- the response mean and variance (:meth:`Family.mean`, :meth:`Family.variance`), simulation
  (:meth:`Family.simulate`), the latent residual variance for variance shares with its note
  (:meth:`Family.latent_residual_variance`, :attr:`Family.latent_note`);
- a table of what the family supports (:class:`Support`), from which higher layers generate refusals.

A family pickles as its class and link.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np

from ...errors import InputError
from ._link import Link, get_link

__all__ = ["AVERAGED_REFUSAL", "DISTRIBUTION_VARIANCE", "Family", "STUDY_METHODS", "Support"]

#: Distribution-specific variance of the latent scale (Nakagawa & Schielzeth 2010): the variance of the
#: standard logistic (pi^2 / 3) for the logit link, of the standard normal (1) for the probit link.
DISTRIBUTION_VARIANCE: dict[str, float] = {"logit": float(np.pi**2 / 3), "probit": 1.0}

#: The methods of :class:`mixeval.Study` a family's :class:`Support` table speaks about.
STUDY_METHODS: tuple[str, ...] = (
    "fit", "variance_components", "phi", "reliability", "dstudy", "cheapest_design", "confint", "phi_interval",
    "dstudy_intervals", "power", "glrt", "glrt_averaged", "variance_lrt", "emmeans", "pairwise", "contrast",
    "joint_tests", "conditional", "metric_comparisons", "report")

#: The reason of a family with its own likelihood for refusing Study.glrt_averaged (:attr:`Support.reasons`).
AVERAGED_REFUSAL = ("glrt_averaged", "it averages the scores per item and system and compares Gaussian linear "
                                     "models, leaving the family out; Study.glrt() is the likelihood-ratio test of "
                                     "this model")


@dataclass(frozen=True)
class Support:
    """What a family supports, for the layers above the engine to read (and to refuse the rest by name).

    Attributes
    ----------
    study_methods : frozenset of str
        Methods of :class:`mixeval.Study` (names in :data:`STUDY_METHODS`) that apply to the family.
    intervals : frozenset of str
        ``confint`` methods: ``"wald"``, ``"profile"``, ``"boot"``.
    power : bool
        Power by simulation and refit on a new design.
    aggregate_sources : bool
        Fits from aggregates computed where the data live (DuckDB, Spark, Parquet, Arrow).
    reml : bool
        A restricted criterion (lmer's REML, the restricted Laplace criterion of glmmTMB's ``REML = TRUE``).
    quadrature : bool
        Adaptive Gauss-Hermite quadrature (``nAGQ > 1``) for a single scalar random-effects term.
    weights : str
        What ``weights=`` means: ``"precision"`` (Var(y_i) = sigma^2 / w_i), ``"trials"`` (a proportion out of
        ``w_i`` trials), ``"prior"`` (the row's log-likelihood counted ``w_i`` times, as glmmTMB) or ``"none"``.
    scales : frozenset of str
        Reliability scales: ``"latent"`` (variance shares with the latent residual variance), ``"observed"``.
    reasons : tuple of (str, str)
        Why the family refuses some of the rest, and what to do instead (``(what, sentence)`` pairs), which
        :meth:`refusal` adds to its message.

    Examples
    --------
    >>> s = Support(study_methods=frozenset({"fit"}), intervals=frozenset({"wald"}), power=False,
    ...             aggregate_sources=False)
    >>> s.allows("fit"), s.allows("power")
    (True, False)
    >>> s.refusal("negative_binomial", "interval").args[0]
    "family='negative_binomial' does not support interval."
    >>> s.refusal("negative_binomial", "power").args[0][:75]
    "family='negative_binomial' does not support Study.power(); it supports ever"
    """

    study_methods: frozenset[str]
    intervals: frozenset[str]
    power: bool
    aggregate_sources: bool
    reml: bool = True
    quadrature: bool = False
    weights: str = "prior"
    scales: frozenset[str] = field(default_factory=lambda: frozenset({"latent"}))
    reasons: tuple[tuple[str, str], ...] = ()

    def allows(self, what: str) -> bool:
        """Whether ``what`` (a Study method, ``"power"``, ``"aggregate_sources"``, ``"reml"``, ``"quadrature"``,
        an interval method or a reliability scale) is supported."""
        if what in ("power", "aggregate_sources", "reml", "quadrature"):
            return bool(getattr(self, what))
        return what in self.study_methods or what in self.intervals or what in self.scales

    def refusal(self, family: str, what: str) -> InputError:
        """The :class:`~mixeval.errors.InputError` refusing ``what`` for ``family``, with the family's reason (from
        :attr:`reasons`) and what is available (a Study method is named as ``Study.name()``)."""
        study = what in STUDY_METHODS
        offered = (sorted(self.intervals) if what in ("wald", "profile", "boot")
                   else sorted(self.scales) if what in ("latent", "observed") else [])
        reason = dict(self.reasons).get(what)
        why = f": {reason}" if reason else ""
        lead = ". It" if reason else "; it"
        tail = f"{lead} supports {', '.join(offered)}" if offered else ""
        if study:
            missing = [f"Study.{m}()" for m in STUDY_METHODS if m not in self.study_methods]
            tail = f"{lead} supports every Study method but {', '.join(missing)}"
        label = f"Study.{what}()" if study else what
        return InputError(f"family={family!r} does not support {label}{why}{tail}.")


@dataclass(frozen=True, eq=False, repr=False)
class Family:
    """A response distribution and its link: R's ``family`` object, with glmmTMB's extra parameters.

    Subclasses set the class attributes and override the methods their distribution needs; a new family is
    one subclass in its own module plus its name in the registry (:mod:`mixeval.mixed.families`).

    Attributes
    ----------
    link : str
        The link's name (one of :attr:`links`; the first by default).
    name : str
        The family's name in the registry (``family=`` of every fitting call, ``--family`` of the CLI).
    links : tuple of str
        The links the family allows, the default first.
    engine : {"lmer", "glmer", "clmm"}
        The fit that serves it (:func:`mixeval.fit` dispatches on it).
    exponential : bool
        An exponential family with a fixed dispersion (binomial, Poisson): the engine uses lme4's deviance
        kernel and working weights (:meth:`dev_kernel`, :meth:`aic`, :meth:`variance`) instead of
        :meth:`loglik` and :meth:`eta_derivatives`.
    parameter_names, parameter_kinds : tuple of str
        The family's parameters beyond the mean (glmmTMB's dispersion ``betadisp`` and ``psi``), estimated with
        the variance parameters; kinds ``"dispersion"`` (positive: its logarithm is the optimiser's
        coordinate) or ``"cutpoint"`` (a threshold on the link scale).
    description : str
        One line for the command line's help.
    latent_note : str
        What the latent residual variance is (and which approximation), printed with variance shares.
    response_label, response_plural : str
        The name of a response-scale mean (the column of ``emmeans(type="response")``: ``"prob"``, ``"rate"``,
        ``"proportion"``) and its plural in prose (``"probabilities"``, ...).
    mean_is_inverse_link : bool
        ``E[y | eta]`` is the inverse link (False for ordered beta, whose exact 0s and 1s move it, and for ordinal
        ratings): response-scale means are then back-transformed link-scale means, and ``exp`` of a link-scale
        difference is the link's ratio (:attr:`ratio_name`).
    support : Support

    Notes
    -----
    The engine works with the parameters on the optimiser's scale (``params``: the logarithm of a
    dispersion); :meth:`parameter_values` maps them to the reported scale and :meth:`dispersion` picks
    glmmTMB's ``sigma()``.

    Examples
    --------
    >>> from mixeval.mixed.families import get_family
    >>> fam = get_family("negative_binomial")
    >>> fam.engine, fam.parameter_names, fam.dispersion(np.log([2.5])), fam.support.allows("power")
    ('glmer', ('dispersion',), 2.5, True)
    """

    link: str | None = None

    name: ClassVar[str] = ""
    links: ClassVar[tuple[str, ...]] = ()
    engine: ClassVar[str] = "glmer"
    exponential: ClassVar[bool] = False
    estimates_scale: ClassVar[bool] = False
    parameter_names: ClassVar[tuple[str, ...]] = ()
    parameter_kinds: ClassVar[tuple[str, ...]] = ()
    description: ClassVar[str] = ""
    latent_note: ClassVar[str] = ""
    response_label: ClassVar[str] = "response"
    response_plural: ClassVar[str] = "means"
    mean_is_inverse_link: ClassVar[bool] = True
    support: ClassVar[Support] = Support(study_methods=frozenset(STUDY_METHODS) - {"power"},
                                         intervals=frozenset({"wald", "profile", "boot"}), power=False,
                                         aggregate_sources=False)

    def __post_init__(self) -> None:
        link = self.links[0] if self.link is None else str(self.link).lower()
        if link not in self.links:
            raise InputError(f"link={self.link!r} is not available for family={self.name!r}; use one of "
                             f"{list(self.links)}.")
        object.__setattr__(self, "link", link)

    # ------------------------------------------------------------------ identity
    def __repr__(self) -> str:
        return f"Family({self.name!r}, link={self.link!r})"

    def __str__(self) -> str:
        return self.name

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and other.link == self.link  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        return hash((type(self).__name__, self.name, self.link))

    def __reduce__(self):
        return (type(self), (self.link,))

    # ------------------------------------------------------------------ link
    @property
    def link_function(self) -> Link:
        """The :class:`~._link.Link` object."""
        return get_link(str(self.link))

    def linkfun(self, mu: np.ndarray) -> np.ndarray:
        return self.link_function.linkfun(mu)

    def linkinv(self, eta: np.ndarray) -> np.ndarray:
        return self.link_function.linkinv(eta)

    def mu_eta(self, eta: np.ndarray) -> np.ndarray:
        return self.link_function.mu_eta(eta)

    @property
    def ratio_name(self) -> str | None:
        """What ``exp`` of a difference of linear predictors is, as a column name: the link's ratio
        (``"odds_ratio"`` for logit, ``"ratio"`` of means for log; :attr:`~._link.Link.ratio`) when the mean is the
        inverse link, else None (no ratio scale: response-scale contrasts are differences)."""
        return self.link_function.ratio if self.mean_is_inverse_link else None

    # ------------------------------------------------------------------ parameters
    @property
    def n_parameters(self) -> int:
        """Number of family parameters estimated with the variance parameters (0 for binomial and Poisson)."""
        return len(self.parameter_names)

    def parameter_values(self, params: np.ndarray) -> dict[str, float]:
        """The family's parameters on the reported scale (a dispersion, not its logarithm), by name."""
        params = np.asarray(params, dtype=float)
        return {n: float(np.exp(v) if k == "dispersion" else v)
                for n, k, v in zip(self.parameter_names, self.parameter_kinds, params)}

    def internal_parameters(self, values: np.ndarray) -> np.ndarray:
        """The inverse of :meth:`parameter_values` (reported values in :attr:`parameter_names` order)."""
        values = np.asarray(values, dtype=float)
        kinds = np.asarray(self.parameter_kinds)
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(kinds == "dispersion", np.log(values), values) if values.size else values

    def valid_parameters(self, params: np.ndarray) -> bool:
        """Whether the likelihood is defined at ``params`` (e.g. ordered cutpoints); the engine treats the criterion
        as infinite elsewhere."""
        return bool(np.all(np.isfinite(params)))

    def dispersion(self, params: np.ndarray) -> float:
        """glmmTMB's ``sigma()``: the family's dispersion parameter on its reported scale (1 for a family whose
        dispersion is fixed, as glmmTMB reports binomial and Poisson fits)."""
        values = self.parameter_values(params)
        return values.get("dispersion", 1.0)

    # ------------------------------------------------------------------ response
    def check_response(self, y: np.ndarray, weights: np.ndarray, name: str) -> None:
        """Raise an :class:`~mixeval.errors.InputError` naming the column ``name`` when ``y`` (with ``weights``)
        is not a response of this family."""

    def initialize(self, y: np.ndarray, weights: np.ndarray) -> np.ndarray:
        """R's ``mustart``: a start for the mean of every row, inside the family's range."""
        return np.asarray(y, dtype=float) + 0.1

    def start_parameters(self, y: np.ndarray, weights: np.ndarray, mu: np.ndarray) -> np.ndarray:
        """Start values of the family's parameters (optimiser scale) given start means ``mu``."""
        return np.zeros(self.n_parameters)

    # ------------------------------------------------------------------ likelihood (families with their own)
    def loglik(self, y: np.ndarray, eta: np.ndarray, weights: np.ndarray, params: np.ndarray) -> float:
        """``log p(y | eta)`` summed over the rows (normalising constants included, prior weights applied)."""
        raise NotImplementedError

    def mu_derivatives(self, y: np.ndarray, mu: np.ndarray, weights: np.ndarray, params: np.ndarray
                       ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The row log-likelihoods' first three derivatives in ``mu`` (the default :meth:`eta_derivatives`
        applies the link's chain rule to them)."""
        raise NotImplementedError

    def eta_derivatives(self, y: np.ndarray, eta: np.ndarray, weights: np.ndarray, params: np.ndarray,
                        third: bool = True) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
        """``d l_i / d eta``, ``d^2 l_i / d eta^2``, ``d^3 l_i / d eta^3`` of every row (prior weights applied; the
        third None without ``third``).

        The Laplace approximation's curvature is the observed information ``-d^2 l / d eta^2`` (as glmmTMB's
        automatic differentiation gives it); the third derivative enters the exact gradient of ``log|L|^2``.
        """
        mu = self.link_function.derivatives(eta)[0]
        l_mu, l_mu2, l_mu3 = self.mu_derivatives(y, mu, weights, params)
        return self.link_function.chain(eta, l_mu, l_mu2, l_mu3 if third else None)

    def fisher_weights(self, eta: np.ndarray, weights: np.ndarray, params: np.ndarray) -> np.ndarray:
        """Positive working weights (the expected information in ``eta``), used by PIRLS where the observed
        information is not positive."""
        raise NotImplementedError

    def parameter_derivatives(self, y: np.ndarray, eta: np.ndarray, weights: np.ndarray, params: np.ndarray
                              ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``d l_i / d params``, ``d (d l_i / d eta) / d params`` and ``d (d^2 l_i / d eta^2) / d params``: three
        ``n x m`` arrays (``m`` = :attr:`n_parameters`, optimiser scale) for the gradient of the Laplace deviance
        in the family's parameters."""
        n = np.asarray(eta).shape[0]
        return np.zeros((n, 0)), np.zeros((n, 0)), np.zeros((n, 0))

    # ------------------------------------------------------------------ mean, variance, simulation
    def mean(self, eta: np.ndarray, params: np.ndarray = ()) -> np.ndarray:
        """``E[y | eta]`` on the response scale (the inverse link unless the family says otherwise)."""
        return np.asarray(self.linkinv(eta), dtype=float)

    def mean_derivatives(self, eta: np.ndarray, params: np.ndarray = ()
                         ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """:meth:`mean` with its first two derivatives in ``eta`` and its gradient in the family's parameters
        (optimiser scale; a trailing axis of :attr:`n_parameters`): what the delta method of a response-scale
        mean and the marginal means (:mod:`mixeval.significance`) need.

        The default is the inverse link's (:attr:`~._link.Link.derivatives`), which no family parameter moves.

        Examples
        --------
        >>> from mixeval.mixed.families import get_family
        >>> m, d1, d2, dp = get_family("poisson").mean_derivatives(np.log([2.0]))
        >>> m.tolist(), d1.tolist(), d2.tolist(), dp.shape
        ([2.0], [2.0], [2.0], (1, 0))
        """
        eta = np.asarray(eta, dtype=float)
        mu, m1, m2, _ = self.link_function.derivatives(eta)
        return mu, m1, m2, np.zeros((*eta.shape, self.n_parameters))

    def variance(self, mu: np.ndarray, params: np.ndarray = (), weights: np.ndarray | float = 1.0) -> np.ndarray:
        """``Var(y | mu)``: the variance function of an exponential family (dispersion 1), the conditional
        variance at ``params`` otherwise."""
        raise NotImplementedError

    def response_variance(self, eta: np.ndarray, params: np.ndarray = (), weights: np.ndarray | float = 1.0
                          ) -> np.ndarray:
        """``Var(y | eta)`` of one row's response as the model scores it (a proportion of ``weights`` trials for
        a trials family), the family's dispersion included: what the observed-scale reliability of a mean score
        needs (:mod:`mixeval._observed`) beside :meth:`mean`.

        Examples
        --------
        >>> from mixeval.mixed.families import get_family
        >>> float(get_family("negative_binomial").response_variance(np.log([2.0]), np.log([4.0]))[0])  # 2 + 4/4
        3.0
        """
        return np.asarray(self.variance(self.linkinv(np.asarray(eta, dtype=float)), params, weights), dtype=float)

    def simulate(self, eta: np.ndarray, weights: np.ndarray, rng: np.random.Generator,
                 params: np.ndarray = ()) -> np.ndarray:
        """Responses drawn with linear predictor ``eta`` (any shape; ``weights`` broadcast against it), as R's
        ``family$simulate`` and glmmTMB's ``SIMULATE`` blocks."""
        raise NotImplementedError

    # ------------------------------------------------------------------ latent scale
    @property
    def latent_variance(self) -> float:
        """Variance of the latent residual on the link scale when it is a constant (pi^2/3 logit, 1 probit); NaN
        where it depends on the fit (:meth:`latent_residual_variance`)."""
        return DISTRIBUTION_VARIANCE.get(str(self.link), float("nan"))

    def latent_residual_variance(self, eta: np.ndarray, re_variance: float, params: np.ndarray = ()) -> float:
        """The residual variance on the latent scale for variance shares (Nakagawa et al. 2017): ``eta`` the fixed
        part of the linear predictor of the rows, ``re_variance`` the summed random-effect variances, ``params``
        the family's parameters (optimiser scale). :attr:`latent_note` says what it is."""
        return self.latent_variance


@dataclass(frozen=True, eq=False, repr=False)
class ExponentialFamily(Family):
    """An exponential family with a fixed dispersion (R's ``binomial()``, ``poisson()``, ``gaussian()``).

    The engine fits it as lme4 does, through the deviance kernel :meth:`dev_kernel`, R's ``aic`` term and the
    working weights ``w mu_eta^2 / V(mu)``; the general protocol's members follow from the variance function
    (:meth:`variance_derivatives`): ``d l / d mu = w (y - mu) / V``.

    Examples
    --------
    >>> from mixeval.mixed.families import get_family
    >>> fam = get_family("poisson")
    >>> fam.exponential, fam.eta_derivatives(np.array([3.0]), np.log([2.0]), np.ones(1), ())[0].tolist()
    (True, [1.0])
    """

    exponential: ClassVar[bool] = True

    def variance(self, mu: np.ndarray, params: np.ndarray = (), weights: np.ndarray | float = 1.0) -> np.ndarray:
        return self.variance_derivatives(np.asarray(mu, dtype=float))[0]

    def variance_derivatives(self, mu: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``V(mu)``, ``V'(mu)``, ``V''(mu)``."""
        raise NotImplementedError

    def dev_resid(self, y: np.ndarray, mu: np.ndarray, wt: np.ndarray) -> np.ndarray:
        """The unit deviances ``d_i`` times the prior weights (R's ``family$dev.resids``)."""
        raise NotImplementedError

    def aic(self, y: np.ndarray, mu: np.ndarray, wt: np.ndarray) -> float:
        """``-2 log p(y | mu)`` summed over the rows, constants included (R's ``family$aic``)."""
        raise NotImplementedError

    def dev_kernel(self, y: np.ndarray, mu: np.ndarray, wt: np.ndarray) -> float:
        """The summed deviance residuals up to a constant that depends only on ``y`` (PIRLS' criterion)."""
        raise NotImplementedError

    def loglik(self, y: np.ndarray, eta: np.ndarray, weights: np.ndarray, params: np.ndarray = ()) -> float:
        return -0.5 * self.aic(y, self.linkinv(eta), weights)

    def mu_derivatives(self, y, mu, weights, params=()):
        """``d l / d mu = w (y - mu) / V`` and its derivatives (dispersion 1)."""
        v, v1, v2 = self.variance_derivatives(mu)
        r = y - mu
        return (weights * r / v, -weights * (1.0 / v + r * v1 / v**2),
                weights * (2 * v1 / v**2 - r * v2 / v**2 + 2 * r * v1**2 / v**3))

    def fisher_weights(self, eta: np.ndarray, weights: np.ndarray, params: np.ndarray = ()) -> np.ndarray:
        me = self.mu_eta(eta)
        return weights * me * me / self.variance(self.linkinv(eta))
