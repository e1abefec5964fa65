"""The book's data sets and the project's own demo data.

:func:`load` returns one of the seven tables of the companion repository of
*Validity, Reliability, and Significance* (Riezler & Hagmann) as a pandas
DataFrame; :func:`list_datasets` describes them; :func:`load_demo` returns the
simulated MT evaluation shipped with mixeval (no network, no book data needed), and
:func:`write_demo` writes it (with the other tables and logs the command-line examples read) as files, and
:func:`toy_scores` draws the small evaluations the examples of the documentation fit.
:func:`read_lm_eval`, :func:`read_inspect`, :func:`read_helm`, :func:`read_jsonl` and :func:`read_logs`
turn evaluation-harness logs into mixeval's long format (see :mod:`mixeval.logs`).

Where the book's tables are looked for, in this order:

1. the ``data_dir`` argument,
2. the directory named by the environment variable ``MIXEVAL_DATA``,
3. the cache directory (``MIXEVAL_CACHE``, else ``~/.cache/mixeval``),
4. only with ``download=True``: the original R ``.rds`` files are downloaded
   from the public GitHub repository ``StatNLP/empirical_methods``, converted to
   the same columns as the local CSV copies and stored in the cache as
   ``<name>.csv.gz`` (reading ``.rds`` needs the optional extra
   ``mixeval[download]``, i.e. the package ``pyreadr``).

A directory holds a table as ``<name>.csv.gz`` or ``<name>.csv``. Grouping
columns keep the types that :func:`pandas.read_csv` gives them (they are not
converted to categoricals), so a table loaded here equals
``pandas.read_csv(path)``.
"""

from __future__ import annotations

import gzip
import io
import json
import os
import tempfile
import urllib.error
import urllib.request
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import numpy as np
import pandas as pd

from .errors import InputError, InputTypeError

_LOG_READERS = ("read_lm_eval", "read_inspect", "read_helm", "read_jsonl", "read_logs")

__all__ = [
    *_LOG_READERS,
    "load",
    "load_demo",
    "load_demo_truth",
    "write_demo",
    "DEMO_FILES",
    "toy_scores",
    "list_datasets",
    "cache_dir",
    "find_data_dir",
    "SOURCE_REPOSITORY",
]

#: The GitHub repository of the book's companion code whose data :func:`load` downloads (``download=True``).
SOURCE_REPOSITORY = "StatNLP/empirical_methods"
_DEFAULT_BASE_URL = f"https://raw.githubusercontent.com/{SOURCE_REPOSITORY}/HEAD/"
_ENV_DATA = "MIXEVAL_DATA"
_ENV_CACHE = "MIXEVAL_CACHE"
_ENV_URL = "MIXEVAL_DATA_URL"


def __getattr__(name: str):
    # the readers of evaluation-harness logs live in mixeval.logs; imported on first use
    if name in _LOG_READERS:
        from . import logs

        return getattr(logs, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@dataclass(frozen=True)
class _Spec:
    name: str
    source_path: str  # path of the original .rds inside the companion repository
    columns: tuple[str, ...]
    rows: int
    description: str
    book_section: str
    whole_doubles_as_integers: bool = True  # the CSV copy prints 3 (R's write.csv), not 3.0


_MT_GRID_COLUMNS = (
    "ter", "sentence_id", "system", "decoder_dropout", "decoder_dropout_hidden", "encoder_dropout",
    "learning_rate", "seed", "delta_scheme", "src_length", "src_length_class",
)
_LIVER_FEATURES = (
    "amv", "heartrate", "leuko", "temp", "pco2", "rr", "artph", "bili", "bun", "crea", "dbp", "fio2",
    "mbp", "pao2", "sbp", "thrombo", "lactate", "bicarb", "crp", "haemo", "hzv", "lympho", "natrium",
    "panklip", "pct", "quinr", "saO2", "glucose", "baseex", "chlorid", "calcium", "kalium", "szvo2",
    "urine24", "netto", "alat", "asat", "svol", "svri", "adrenaline", "dobutamine", "dopamine",
    "noradrenaline", "horovitz",
)

_SPECS: dict[str, _Spec] = {
    s.name: s
    for s in (
        _Spec(
            "mt_annotation",
            "kreutzer_et_al_example/data/data_annotation.rds",
            ("mode", "occasion", "sentence", "rater", "score"),
            300,
            "human feedback scores: mode (Marking / Post Edit) x 5 sentences x 10 raters x 3 occasions",
            "3.3.3, Tables 3.1, 3.2, Figure 3.3",
        ),
        _Spec(
            "mt_ter",
            "kreutzer_et_al_example/data/data_ter.rds",
            ("sentence_id", "system", "replication", "ter", "src_length"),
            7287,
            "sentence-level TER of 3 systems on 1,041 sentences, replication = training seed",
            "4.3.2, Tables 4.1-4.3",
        ),
        _Spec(
            "mt_grid_partial",
            "kreutzer_et_al_example/data/data_hyperparameter-marking_partial.rds",
            _MT_GRID_COLUMNS,
            56214,
            "TER of the partial meta-parameter grid of the Marking system",
            "Tables 3.8, 3.9, Figure 3.5",
        ),
        _Spec(
            "mt_grid_full",
            "kreutzer_et_al_example/data/data_hyperparameter-marking_full.rds",
            _MT_GRID_COLUMNS,
            337284,
            "TER of the full meta-parameter grid of the Marking system",
            "Tables 3.10, 3.11",
        ),
        _Spec(
            "liver_gridsearch",
            "liver_sofa_example/reliability_gridsearch_results.rds",
            ("system", "accuracy", "dropout", "hidden_size_max", "hidden_number", "learning_rate",
             "batch_size", "random_seed", "epochs"),
            12150,
            "mean test accuracy of 12,150 MLPs for liver SOFA, one row per meta-parameter configuration",
            "Table 3.4",
        ),
        _Spec(
            "liver_sofa_test",
            "liver_sofa_example/test_set_with_sofa_predictions.rds",
            _LIVER_FEATURES + ("target", "sofa_circ", "sofa_nocirc"),
            80671,
            "45 clinical measurements, gold liver SOFA target and two teacher networks' predictions",
            "2.4.3, Tables 2.6, Figures 2.9, 2.10, 2.19",
        ),
        _Spec(
            "ir_test",
            "ir_example/data/ir_testset.rds",
            ("queryId", "documentId", "relevance", "score_neural", "score_tfIdf", "cited_inventor",
             "cited_examiner", "cited_family"),
            106690,
            "patent retrieval test split: 500 queries x documents, gold relevance 0-3, two scores, three citation flags",
            "2.4.3, Tables 2.3-2.5, Figures 2.7, 2.8",
            whole_doubles_as_integers=False,
        ),
    )
}

# In-memory cache: resolved file -> (mtime_ns, size, frame). Callers always get a copy.
_MEMORY: dict[Path, tuple[int, int, pd.DataFrame]] = {}


def list_datasets() -> pd.DataFrame:
    """Describe the book's data sets that :func:`load` knows.

    Returns
    -------
    pandas.DataFrame
        One row per data set: ``name``, ``rows`` (of the original table),
        ``columns`` (comma-separated), ``description``, ``book_section`` and
        ``source`` (path of the original ``.rds`` in ``StatNLP/empirical_methods``).

    Examples
    --------
    >>> from mixeval import datasets
    >>> datasets.list_datasets()["name"].tolist()[:2]
    ['mt_annotation', 'mt_ter']
    """
    return pd.DataFrame(
        {
            "name": [s.name for s in _SPECS.values()],
            "rows": [s.rows for s in _SPECS.values()],
            "columns": [", ".join(s.columns) for s in _SPECS.values()],
            "description": [s.description for s in _SPECS.values()],
            "book_section": [s.book_section for s in _SPECS.values()],
            "source": [s.source_path for s in _SPECS.values()],
        }
    )


def cache_dir() -> Path:
    """The download cache: ``$MIXEVAL_CACHE`` if set, else ``~/.cache/mixeval``.

    Examples
    --------
    >>> from unittest import mock
    >>> with mock.patch.dict("os.environ", {"MIXEVAL_CACHE": "/tmp/mixeval-cache"}):
    ...     cache_dir().as_posix()
    '/tmp/mixeval-cache'
    """
    env = os.environ.get(_ENV_CACHE)
    return Path(env).expanduser() if env else Path.home() / ".cache" / "mixeval"


def _spec(name: object) -> _Spec:
    if not isinstance(name, str):
        raise InputTypeError(f"`name` must be a string naming a data set; got {type(name).__name__}.")
    if name not in _SPECS:
        raise InputError(
            f"unknown data set {name!r}; available: {', '.join(_SPECS)} "
            "(see mixeval.datasets.list_datasets()); the demo data is mixeval.datasets.load_demo()."
        )
    return _SPECS[name]


def _file_in(directory: Path, name: str) -> Path | None:
    for suffix in (".csv.gz", ".csv"):
        candidate = directory / f"{name}{suffix}"
        if candidate.is_file():
            return candidate
    return None


def _candidate_dirs(data_dir: str | os.PathLike[str] | None) -> list[tuple[str, Path]]:
    """The directories searched, in order, each with a label for error messages."""
    out: list[tuple[str, Path]] = []
    if data_dir is not None:
        if not isinstance(data_dir, (str, os.PathLike)):
            raise InputTypeError(f"`data_dir` must be a path (str or pathlib.Path); got {type(data_dir).__name__}.")
        path = Path(data_dir).expanduser()
        if not path.is_dir():
            raise InputError(
                f"`data_dir` {str(path)!r} is not a directory. Pass the folder holding the book's "
                "CSV files (e.g. mt_ter.csv.gz), or leave data_dir=None to use $MIXEVAL_DATA or the cache."
            )
        out.append(("data_dir argument", path))
    env = os.environ.get(_ENV_DATA)
    if env:
        out.append((f"${_ENV_DATA}", Path(env).expanduser()))
    out.append(("cache", cache_dir()))
    return out


def find_data_dir(name: str = "mt_ter", *, data_dir: str | os.PathLike[str] | None = None) -> Path | None:
    """The first directory (in the look-up order of :func:`load`) that holds data set ``name``.

    Returns ``None`` when no directory holds it (nothing is downloaded here).

    Examples
    --------
    >>> from mixeval import datasets
    >>> folder = datasets.find_data_dir("mt_ter")  # None when the book data is nowhere local
    """
    spec = _spec(name)
    for _, directory in _candidate_dirs(data_dir):
        if directory.is_dir() and _file_in(directory, spec.name) is not None:
            return directory
    return None


def _read_table(path: Path) -> pd.DataFrame:
    resolved = path.resolve()
    stat = resolved.stat()
    hit = _MEMORY.get(resolved)
    if hit is not None and hit[0] == stat.st_mtime_ns and hit[1] == stat.st_size:
        return hit[2].copy()
    try:
        frame = pd.read_csv(resolved)
    except (OSError, EOFError, UnicodeDecodeError, pd.errors.ParserError) as exc:
        raise InputError(f"cannot read {str(resolved)!r} as CSV ({exc}); delete or replace the file.") from exc
    _MEMORY[resolved] = (stat.st_mtime_ns, stat.st_size, frame)
    return frame.copy()


def _check_columns(frame: pd.DataFrame, spec: _Spec, origin: str) -> pd.DataFrame:
    missing = [c for c in spec.columns if c not in frame.columns]
    if missing:
        raise InputError(
            f"data set {spec.name!r} read from {origin} lacks column(s) {', '.join(map(repr, missing))}; "
            f"it has: {', '.join(map(str, frame.columns))}. The file is not the book's table: "
            "remove it or point data_dir / $MIXEVAL_DATA elsewhere."
        )
    return frame


def load(
    name: str,
    *,
    data_dir: str | os.PathLike[str] | None = None,
    download: bool = False,
) -> pd.DataFrame:
    """Load one of the book's data sets as a DataFrame.

    Parameters
    ----------
    name : str
        One of ``list_datasets()["name"]``: ``mt_annotation``, ``mt_ter``,
        ``mt_grid_partial``, ``mt_grid_full``, ``liver_gridsearch``,
        ``liver_sofa_test``, ``ir_test``.
    data_dir : str or Path, optional
        Folder holding ``<name>.csv.gz`` (or ``<name>.csv``); searched first.
    download : bool, default False
        If the table is in none of the searched folders, download the original
        ``.rds`` from ``StatNLP/empirical_methods`` on GitHub (needs network and
        ``pip install mixeval[download]``), convert it and keep it in
        :func:`cache_dir`. The base URL can be overridden with ``$MIXEVAL_DATA_URL``.

    Returns
    -------
    pandas.DataFrame
        A fresh copy (tables read once are cached in memory; modifying the result
        never affects later calls). Columns and types are those of
        ``pandas.read_csv`` on the CSV copy.

    Raises
    ------
    mixeval.errors.InputError
        Unknown ``name`` (lists the valid names), ``data_dir`` not a directory, or
        the table found nowhere (says how to set ``MIXEVAL_DATA`` or use
        ``download=True``).

    Notes
    -----
    Look-up order: ``data_dir``, ``$MIXEVAL_DATA``, the cache
    (``$MIXEVAL_CACHE`` or ``~/.cache/mixeval``), then the download.

    Examples
    --------
    >>> from mixeval import datasets
    >>> ter = datasets.load("mt_ter")  # doctest: +SKIP
    >>> ter.groupby("system")["ter"].mean()  # doctest: +SKIP
    """
    spec = _spec(name)
    if not isinstance(download, bool):
        raise InputTypeError(f"`download` must be True or False; got {download!r}.")
    searched = _candidate_dirs(data_dir)
    for _label, directory in searched:
        if directory.is_dir():
            found = _file_in(directory, spec.name)
            if found is not None:
                return _check_columns(_read_table(found), spec, str(found))
    if download:
        path = _download(spec)
        return _check_columns(_read_table(path), spec, str(path))
    where = "; ".join(f"{label}: {directory}" for label, directory in searched)
    raise InputError(
        f"data set {spec.name!r} ({spec.name}.csv.gz) not found (searched {where}). "
        f"Set the environment variable {_ENV_DATA} to the folder holding the book's CSV files, pass "
        f"data_dir=..., or call load({spec.name!r}, download=True) to fetch it from the GitHub "
        f"repository {SOURCE_REPOSITORY} (needs network and `pip install mixeval[download]`)."
    )


# --------------------------------------------------------------------------- download


def _fetch(url: str, timeout: float = 60.0) -> bytes:
    """Bytes at ``url`` (the only function that touches the network; tests replace it)."""
    request = urllib.request.Request(url, headers={"User-Agent": "mixeval"})
    with urllib.request.urlopen(request, timeout=timeout) as response:  # noqa: S310 (https URL)
        return response.read()


def _read_rds(path: Path) -> pd.DataFrame:
    """Read an R ``.rds`` data frame with pyreadr (the optional ``download`` extra)."""
    try:
        import pyreadr
    except ImportError:
        raise ImportError(
            "reading the book's original .rds files needs the package 'pyreadr': "
            "pip install 'mixeval[download]' (or pip install pyreadr). Alternatively set "
            f"{_ENV_DATA} to a folder holding the tables as CSV."
        ) from None
    result = pyreadr.read_r(str(path))
    if len(result) != 1:
        raise InputError(f"{str(path)!r} holds {len(result)} R objects; expected one data frame.")
    return next(iter(result.values()))


def _to_book_columns(frame: pd.DataFrame, spec: _Spec) -> pd.DataFrame:
    """The original table restricted to and ordered as the CSV copy, factors as their labels."""
    frame = _check_columns(frame, spec, f"the downloaded {spec.source_path}")
    out = frame.loc[:, list(spec.columns)].copy()
    for column in out.columns:
        series = out[column]
        if isinstance(series.dtype, pd.CategoricalDtype):
            out[column] = series.astype(object).where(series.notna(), None)
        elif pd.api.types.is_float_dtype(series):
            finite = series.dropna()
            if (spec.whole_doubles_as_integers and len(finite) and np.isfinite(finite).all()
                    and (finite == np.round(finite)).all()):
                # R's write.csv prints whole doubles without ".0"; match the CSV copies
                out[column] = series.astype("Int64")
    return out.reset_index(drop=True)


def _download(spec: _Spec) -> Path:
    base = os.environ.get(_ENV_URL, _DEFAULT_BASE_URL)
    if not base.endswith("/"):
        base += "/"
    url = base + spec.source_path
    try:
        payload = _fetch(url)
    except (urllib.error.URLError, TimeoutError, OSError) as exc:
        raise InputError(
            f"could not download {url} ({exc}). Without network, set {_ENV_DATA} to a folder holding "
            f"{spec.name}.csv.gz."
        ) from exc
    target_dir = cache_dir()
    target_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target_dir) as tmp:
        raw = Path(tmp) / Path(spec.source_path).name
        raw.write_bytes(payload)
        table = _to_book_columns(_read_rds(raw), spec)
        staged = Path(tmp) / f"{spec.name}.csv.gz"
        buffer = io.StringIO()
        table.to_csv(buffer, index=False)
        with gzip.open(staged, "wt", encoding="utf-8", newline="") as handle:
            handle.write(buffer.getvalue())
        final = target_dir / f"{spec.name}.csv.gz"
        os.replace(staged, final)  # atomic: a half-written file is never visible in the cache
    return final


# --------------------------------------------------------------------------- demo data


def load_demo() -> pd.DataFrame:
    """The simulated MT evaluation shipped with mixeval (no network, no book data).

    7,200 rows in long format: ``item`` (200 test sentences), ``system`` (3),
    ``seed`` (3 training seeds per system, nested in system), ``rater`` (4),
    ``src_length`` (words of the source sentence), ``length_class`` (``short``
    <= 15 < ``typical`` <= 55 < ``very long``, the book's classes) and ``score``.
    The generating model and its true values are in :func:`load_demo_truth` and
    ``data/README.md``.

    Examples
    --------
    >>> from mixeval import datasets
    >>> demo = datasets.load_demo()
    >>> demo.shape
    (7200, 7)
    """
    with (resources.files("mixeval") / "data" / "demo_mt.csv").open("rb") as handle:
        return pd.read_csv(handle)


def load_demo_truth() -> dict:
    """True parameter values of the demo data's generating model (see ``data/README.md``).

    Examples
    --------
    >>> from mixeval import datasets
    >>> sorted(datasets.load_demo_truth()["variance_components"])
    ['Residual', 'item', 'item:rater', 'rater', 'system:seed']
    """
    with (resources.files("mixeval") / "data" / "demo_mt_truth.json").open("r", encoding="utf-8") as handle:
        return json.load(handle)


DEMO_FILES = {
    "demo_mt.csv": "the demo in long format, one row per score (load_demo())",
    "demo_scores.csv": "one row per item, one column per system: the item's mean score over raters and seeds",
    "demo_ratings.csv": "one row per translation (item-system-seed), one column per rater",
    "demo_votes.csv": "3,000 simulated pairwise votes between the three systems (judge, prompt, ties)",
    "demo_logs": "lm-evaluation-harness sample logs of three models on 200 questions in 40 passages (simulated)",
    "demo_circularity.csv": "2,000 patients' kidney measurements and the kidney SOFA score, a rule over two of them",
    "demo_answers.csv": "1,000 answers of a QA model: its confidence (MaxProb) and whether the answer is right",
    "demo_pairs.csv": "two metrics' scores of outputs and of degraded copies, per source sentence and system",
}
"""The files :func:`write_demo` writes (file name -> what it holds)."""

_ROUNDED = {"demo_scores.csv", "demo_answers.csv", "demo_pairs.csv"}  # written with 4 decimals


def write_demo(directory: str | os.PathLike[str] = ".") -> dict[str, Path]:
    """Write the demo data as CSV files into ``directory`` (created if needed), as the command-line examples read it.

    ``mixeval demo --write-data DIR`` calls this. The files (:data:`DEMO_FILES`):

    * ``demo_mt.csv``: the demo of :func:`load_demo` in long format;
    * ``demo_scores.csv``: its item means per system (wide, for ``mixeval bootstrap`` and ``permutation``);
    * ``demo_ratings.csv``: every translation's four ratings (wide: a column ``translation`` naming item, system and
      seed, one column per rater; for ``mixeval agreement``);
    * ``demo_votes.csv``: pairwise votes between the same three systems simulated by
      :func:`mixeval.preferences.simulate_arena` (abilities 0, 0.2, 0.5 on the log-odds scale, 8 judges with a
      position bias, 100 prompts, ties; seed 2026), for ``mixeval preferences``;
    * ``demo_logs/``: lm-evaluation-harness ``--log_samples`` files of three models on 200 questions in 40
      passages, simulated with known accuracies (about 0.71, 0.63, 0.61), for ``mixeval compare-logs``;
    * ``demo_circularity.csv``: 2,000 patients' kidney measurements with the kidney SOFA score (book Table 2.7), a
      rule over creatinine and urine output, and its 0/1 version ``kidney_failure``, for ``mixeval circularity``;
    * ``demo_answers.csv``: a QA model's confidences (``maxprob``) and correctness, for ``mixeval meta selective``;
    * ``demo_pairs.csv``: BLEU and WER scores of outputs and of degraded copies, per source sentence (``context``)
      and system, for ``mixeval meta local``.

    The generating models of the last four (their known truth) are in the docstrings of ``mixeval/_demo.py``.

    Parameters
    ----------
    directory : str or path-like, default "."
        Where to write; existing files of the same names are overwritten.

    Returns
    -------
    dict of str to pathlib.Path
        File name -> path written.

    Examples
    --------
    >>> import tempfile
    >>> from mixeval import datasets
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     paths = datasets.write_demo(tmp)
    ...     scores = pd.read_csv(paths["demo_scores.csv"])
    >>> sorted(paths)[:4]
    ['demo_answers.csv', 'demo_circularity.csv', 'demo_logs', 'demo_mt.csv']
    >>> scores.columns.tolist(), len(scores)
    (['item', 'baseline', 'system_a', 'system_b'], 200)
    """
    if not isinstance(directory, (str, os.PathLike)):
        raise InputTypeError(f"`directory` must be a folder path; got {type(directory).__name__}.")
    target = Path(directory)
    if target.exists() and not target.is_dir():
        raise InputError(f"cannot write the demo data into {str(target)!r}: it is a file, not a folder.")
    target.mkdir(parents=True, exist_ok=True)
    from ._demo import answers_table, circularity_table, metric_pairs_table, write_harness_logs
    from .preferences import simulate_arena

    demo = load_demo()
    ratings = demo.assign(translation=demo["item"] + "-" + demo["system"] + "-" + demo["seed"].astype(str))
    ratings = ratings.pivot(index="translation", columns="rater", values="score")
    tables = {
        "demo_scores.csv": demo.pivot_table(index="item", columns="system", values="score").reset_index(),
        "demo_ratings.csv": ratings.reset_index(),
        "demo_votes.csv": simulate_arena(3000, {"baseline": 0.0, "system_a": 0.2, "system_b": 0.5}, n_judges=8,
                                         n_prompts=100, position=0.3, judge_sd=0.3, tie_tau=0.4, random_state=2026),
        "demo_circularity.csv": circularity_table(),
        "demo_answers.csv": answers_table(),
        "demo_pairs.csv": metric_pairs_table(),
    }
    paths = {"demo_mt.csv": target / "demo_mt.csv"}
    with (resources.files("mixeval") / "data" / "demo_mt.csv").open("rb") as handle:
        paths["demo_mt.csv"].write_bytes(handle.read())  # the bundled file itself
    for name, table in tables.items():
        table.columns.name = None
        paths[name] = target / name
        table.to_csv(paths[name], index=False, float_format="%.4f" if name in _ROUNDED else None)
    paths["demo_logs"] = write_harness_logs(target / "demo_logs")
    return paths


_TOY_CUTS = (-1.5, -0.5, 0.5, 1.5)  # the cut points of the latent score behind a toy_scores rating (1-5)


def toy_scores(n_items: int = 30, systems: Sequence[str] = ("A", "B", "C"), *, n_raters: int = 1,
               response: str = "score", random_state: int = 0) -> pd.DataFrame:
    """A small simulated evaluation with known truth: every item scored for every system by every rater.

    The examples of mixeval's documentation fit these tables; they are also a quick way to try a function.

    Parameters
    ----------
    n_items : int, default 30
        Test items (``item`` 0, 1, ...).
    systems : sequence of str, default ("A", "B", "C")
        The systems compared (``system``); the k-th system's effect is ``0.2 k``.
    n_raters : int, default 1
        Raters (``rater`` 0, 1, ...); with one rater the table has no ``rater`` column.
    response : {"score", "correct", "rating"}, default "score"
        The response column: a Gaussian score, a 0/1 correctness or a 1-5 rating.
    random_state : int, default 0
        Seed of the draws.

    Returns
    -------
    pandas.DataFrame
        One row per item, system and rater (items vary slowest, raters fastest): ``item``, ``system``, ``rater``
        (with several raters) and the response.

    Notes
    -----
    With item effects ``u_i ~ N(0, 1)`` and rater effects ``v_r ~ N(0, 0.5^2)`` (drawn in that order), the linear
    predictor of system ``k`` is ``eta = 0.2 k + u_i + v_r``, and

    * ``score = eta + e``, ``e ~ N(0, 1)`` (lme4: ``score ~ system + (1|item) + (1|rater)``);
    * ``correct ~ Bernoulli(logistic(eta))`` (``glmer(correct ~ system + (1|item) + (1|rater), binomial)``);
    * ``rating = 1 + #{j: c_j < eta + e}``, ``e`` logistic, cut points ``c = (-1.5, -0.5, 0.5, 1.5)``
      (``ordinal::clmm(rating ~ system + (1|item) + (1|rater))`` with thresholds ``c``).

    Examples
    --------
    >>> from mixeval import datasets
    >>> df = datasets.toy_scores(n_items=2, systems=("A", "B"), n_raters=2)
    >>> df.round(2)
       item system  rater  score
    0     0      A      0  -0.09
    1     0      A      1   0.54
    2     0      B      0   1.95
    3     0      B      1   1.33
    4     1      A      0  -0.52
    5     1      A      1  -1.35
    6     1      B      0  -0.24
    7     1      B      1   0.16
    """
    from ._validation import require_positive_int

    n_items = require_positive_int(n_items, "n_items")
    n_raters = require_positive_int(n_raters, "n_raters")
    if isinstance(systems, str) or not len(systems):
        raise InputTypeError(f"`systems` must be a sequence of system names, e.g. ('A', 'B'); got {systems!r}.")
    if response not in ("score", "correct", "rating"):
        raise InputError(f"`response` must be 'score', 'correct' or 'rating'; got {response!r}.")
    rng = np.random.default_rng(require_positive_int(random_state, "random_state", minimum=0))
    n_systems = len(systems)
    item = np.repeat(np.arange(n_items), n_systems * n_raters)
    system = np.tile(np.repeat(np.arange(n_systems), n_raters), n_items)
    rater = np.tile(np.arange(n_raters), n_items * n_systems)
    eta = rng.normal(0.0, 1.0, n_items)[item] + 0.2 * system
    if n_raters > 1:
        eta = eta + rng.normal(0.0, 0.5, n_raters)[rater]
    table = pd.DataFrame({"item": item, "system": np.asarray(list(systems), dtype=object)[system]})
    if n_raters > 1:
        table["rater"] = rater
    if response == "score":
        table["score"] = eta + rng.normal(0.0, 1.0, eta.size)
    elif response == "correct":
        table["correct"] = (rng.random(eta.size) < 1.0 / (1.0 + np.exp(-eta))).astype(int)
    else:
        table["rating"] = np.digitize(eta + rng.logistic(size=eta.size), _TOY_CUTS) + 1
    return table
