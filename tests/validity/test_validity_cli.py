"""``mixeval circularity`` on a CSV: JSON shape, verdict and clean errors."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd

from mixeval.cli import main


def _csv(tmp_path):
    rng = np.random.default_rng(0)
    d = pd.DataFrame(rng.normal(size=(2000, 3)), columns=["a", "b", "c"])
    d["b"] += d["a"]
    d["label"] = np.digitize(d["a"], [-1.0, 0.0, 1.0])
    path = tmp_path / "d.csv"
    d.to_csv(path, index=False)
    return path


def test_cli_json(tmp_path, capsys):
    path = _csv(tmp_path)
    assert main(["circularity", str(path), "--target", "label", "--k", "30", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["circular"] == ["a"]
    assert len(out["models"]) == 7 and {"features", "d2", "edf"} <= set(out["models"][0])
    assert set(out["nullification"]) == {"b", "c"}
    assert 0.9 < out["d2"] <= 1


def test_cli_text_features_and_errors(tmp_path, capsys):
    path = _csv(tmp_path)
    assert main(["circularity", str(path), "--target", "label", "--features", "b,c"]) == 0
    assert "no circular set" in capsys.readouterr().out
    assert main(["circularity", str(path), "--target", "nope"]) == 2
    assert "not found" in capsys.readouterr().err
