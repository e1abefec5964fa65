"""Chance-corrected agreement coefficients (book Section 3.3.1): Krippendorff's alpha,
Cohen's kappa and Scott's pi, with bootstrap confidence intervals over units.

The book recommends the model-based reliability coefficient phi instead (Section
3.4); :func:`alpha_vs_phi` puts both side by side on the same annotation data.
"""

from ._coefficients import (
           LEVELS,
           AgreementResult,
           agreement,
           cohens_kappa,
           krippendorff_alpha,
           ratings_matrix,
           scotts_pi,
)
from ._versus import alpha_vs_phi, phi_from_components

__all__ = ["krippendorff_alpha", "cohens_kappa", "scotts_pi", "agreement", "AgreementResult", "ratings_matrix", "LEVELS", "alpha_vs_phi",
           "phi_from_components"]
