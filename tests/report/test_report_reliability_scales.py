"""The report's reliability for a binary Study leads with the observed scale at the data's own design and names both
scales and every design (issue 36 item 9, issue 41 item 3)."""

import warnings

import numpy as np
import pandas as pd
from scipy.special import expit

from mixeval import Study
from mixeval.report import build_report


def test_binary_report_leads_with_the_observed_scale_at_the_datas_design():
    rng = np.random.default_rng(8)
    d = pd.DataFrame([(i, s, r) for i in range(40) for s in ("A", "B") for r in range(3)],
                     columns=["item", "system", "rater"])
    eta = 0.8 + 0.5 * (d.system == "B") + rng.normal(0, 1, 40)[d.item] + rng.normal(0, 0.4, 3)[d.rater]
    d["correct"] = (rng.random(len(d)) < expit(eta)).astype(int)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        study = Study(d, "correct ~ system + (1|item) + (1|rater)", family="binomial")
        section = build_report(study, progress=False).section("Variance components and reliability")
    table = section.tables[1].data
    labels = list(table["coefficient"])
    assert labels[0] == "phi (observed scale) at the data's design (rater = 3)"
    assert "phi (latent scale) at the data's design (rater = 3)" in labels
    values = dict(zip(labels, table["value"]))
    assert values[labels[0]] == study.phi({"rater": 3})
    assert values["phi (latent scale) at the data's design (rater = 3)"] == study.phi({"rater": 3}, scale="latent")
    assert section.summary[1].startswith("reliability phi (observed scale) at the data's design (rater = 3)")
    notes = " ".join(b.text for b in section.blocks if type(b).__name__ == "Note")
    assert "observed: observed scale" in notes and "latent: latent (logit) scale" in notes
    assert "The D-study is on the observed scale." in notes
