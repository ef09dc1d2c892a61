"""Logistic regression of a fractional outcome with a normal prior on its coefficients,
batched over bootstrap resamples: the maximum a posteriori fit by Newton's method with step
halving (the objective is concave). A fractional y in [0, 1] is fitted by the binomial
log-likelihood Σ w·(y·η − log(1 + e^η)) (quasi-binomial), as `length_control` does.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from judgecli.stats.intervals import FloatArray
from judgecli.stats.special import expit

MAX_ITERATIONS = 100
MAX_HALVINGS = 40
TOLERANCE = 1e-9
"""Newton stops once no coefficient moves by more than this."""


def fit_logistic(
    z: FloatArray, y: FloatArray, w: FloatArray, center: FloatArray, *, precision: float
) -> tuple[FloatArray, npt.NDArray[np.bool_]]:
    """Logistic regression of y on z for each resample with a normal prior of precision
    `precision` around `center` (the maximum a posteriori fit): z shape (resamples, rows,
    p), w (resamples, rows), center (resamples, p), where Newton also starts. The
    coefficients (resamples, p), and per resample whether Newton converged.
    """
    r, _, p = z.shape
    beta = center.copy()
    done = np.zeros(r, dtype=bool)

    def objective(b: FloatArray) -> FloatArray:
        eta = np.matmul(z, b[:, :, None])[:, :, 0]
        ll = (w * (y * eta - np.logaddexp(0.0, eta))).sum(axis=1)
        return np.asarray(ll - precision / 2 * ((b - center) ** 2).sum(axis=1))

    value = objective(beta)
    for _ in range(MAX_ITERATIONS):
        prob = expit(np.matmul(z, beta[:, :, None])[:, :, 0])
        grad = np.matmul((w * (y - prob))[:, None, :], z)[:, 0, :] - precision * (beta - center)
        weighted = z * (w * prob * (1 - prob))[:, :, None]
        info = np.matmul(weighted.transpose(0, 2, 1), z) + precision * np.eye(p)
        step = np.linalg.solve(info, grad[:, :, None])[:, :, 0]
        scale = np.ones(r)
        for _ in range(MAX_HALVINGS):
            trial = beta + scale[:, None] * step
            trial_value = objective(trial)
            worse = trial_value < value - 1e-12 * (1.0 + np.abs(value))
            if not worse.any():
                break
            scale = np.where(worse, scale / 2.0, scale)
        done |= np.abs(trial - beta).max(axis=1) < TOLERANCE
        beta, value = trial, trial_value
        if done.all():
            break
    return beta, done
