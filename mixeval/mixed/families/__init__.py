"""Response distributions of the one model core: one :class:`Family` protocol, one module per family, a registry.

The registry (:data:`REGISTRY`) maps a family's name to its class; every fitting call (``family=``), the
command line's ``--family`` choices and the layers above read it. Adding a family is one module holding a
:class:`Family` subclass (its link, response checks, start values, log-likelihood and derivatives, simulation,
latent residual variance, support table) and one line in :data:`_MODULES` below: see docs/architecture.md
("Adding a family") with the negative binomial family as the example.

Examples
--------
>>> from mixeval.mixed.families import family_names, get_family
>>> family_names()[:3]
('gaussian', 'binomial', 'poisson')
>>> get_family("nbinom2"), get_family("beta_binomial").dispersion([0.0])
(Family('negative_binomial', link='log'), 1.0)
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator, Mapping

from ...errors import InputError
from ._base import DISTRIBUTION_VARIANCE, STUDY_METHODS, ExponentialFamily, Family, Support
from ._link import LINKS, Link, get_link

__all__ = ["DISTRIBUTION_VARIANCE", "FAMILIES", "LINKS", "REGISTRY", "STUDY_METHODS", "ExponentialFamily", "Family",
           "Link", "Support", "family_names", "get_family", "get_link", "register_family", "unregister_family"]

#: The modules of the built-in families, in the order the command line lists them: each defines one
#: :class:`Family` subclass (the one whose ``name`` is set).
_MODULES = ("gaussian", "binomial", "poisson", "negative_binomial", "beta", "ordered_beta", "beta_binomial", "ordinal")

#: family name -> :class:`Family` subclass
REGISTRY: dict[str, type[Family]] = {}

#: other names a family answers to (glmmTMB's): alias -> family name
_ALIASES: dict[str, str] = {}


def register_family(cls: type[Family]) -> type[Family]:
    """Add a :class:`Family` subclass to the registry under ``cls.name`` (and its ``aliases``); returns ``cls``.

    Examples
    --------
    >>> from dataclasses import dataclass
    >>> from typing import ClassVar
    >>> @dataclass(frozen=True, eq=False, repr=False)
    ... class Geometric(Family):
    ...     name: ClassVar[str] = "geometric"
    ...     links: ClassVar[tuple[str, ...]] = ("log",)
    >>> register_family(Geometric) is Geometric, get_family("geometric")
    (True, Family('geometric', link='log'))
    >>> unregister_family("geometric"); "geometric" in family_names()
    False
    """
    if not (isinstance(cls, type) and issubclass(cls, Family)) or not cls.name or not cls.links:
        raise TypeError("register_family takes a Family subclass with a name and its links")
    if cls.name in REGISTRY and REGISTRY[cls.name] is not cls:
        raise ValueError(f"a family called {cls.name!r} is already registered")
    REGISTRY[cls.name] = cls
    for alias in getattr(cls, "aliases", ()):
        _ALIASES[alias] = cls.name
    return cls


def unregister_family(name: str) -> None:
    """Remove a family (and its aliases) from the registry (:func:`register_family` shows both).

    Examples
    --------
    >>> unregister_family("no_such_family")  # a name that is not registered: nothing to do
    """
    REGISTRY.pop(name, None)
    for alias in [a for a, n in _ALIASES.items() if n == name]:
        del _ALIASES[alias]


def _load() -> None:
    for module in _MODULES:
        mod = importlib.import_module(f".{module}", __name__)
        for value in vars(mod).values():
            if isinstance(value, type) and issubclass(value, Family) and value.__module__ == mod.__name__ and value.name:
                register_family(value)


def family_names() -> tuple[str, ...]:
    """The registered families' names (the command line's ``--family`` choices).

    Examples
    --------
    >>> "negative_binomial" in family_names(), family_names()[-1]
    (True, 'ordinal')
    """
    return tuple(REGISTRY)


class _Links(Mapping):
    """family name -> the links it allows (the first is the default): a live view of the registry."""

    def __getitem__(self, name: str) -> tuple[str, ...]:
        return REGISTRY[name].links

    def __iter__(self) -> Iterator[str]:
        return iter(REGISTRY)

    def __len__(self) -> int:
        return len(REGISTRY)


#: family name -> allowed links (the first is the default), for every registered family.
FAMILIES: Mapping[str, tuple[str, ...]] = _Links()


def get_family(family: str | Family, link: str | None = None) -> Family:
    """The :class:`Family` named ``family`` (or one of glmmTMB's names for it) with ``link`` (its default link when
    None); a :class:`Family` is returned as it is.

    Examples
    --------
    >>> get_family("binomial")
    Family('binomial', link='logit')
    >>> float(get_family("binomial", "probit").linkinv(0.0))
    0.5
    """
    if isinstance(family, Family):
        if link is not None and str(link).lower() != family.link:
            raise InputError(f"family {family!r} already fixes the link {family.link!r}; got link={link!r}.")
        return family
    name = str(family).lower()
    name = _ALIASES.get(name, name)
    if name not in REGISTRY:
        choices = "; ".join(f"{n} ({cls.description})" for n, cls in REGISTRY.items())
        raise InputError(f"family={family!r} is not supported; use one of: {choices}.")
    return REGISTRY[name](None if link is None else str(link).lower())


_load()
