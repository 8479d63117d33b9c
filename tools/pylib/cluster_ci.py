"""ppl's cluster-robust interval by the general matrix formulas: the reference for
eval/stats.c's stats_cluster_ratio_ci (tools/fixtures/make_stats_fixtures.py,
tools/fixtures/make_stream_units_fixture.py). Needs numpy, scipy and statsmodels."""

import numpy as np
import scipy.stats
import statsmodels.api as sm


def cluster_ratio_reference(y, g, level):
    """ppl's interval from per-target rows y (B - A) in clusters g, by the general matrix
    formulas (Imbens and Kolesar 2016, section 3: the CR2 variance with (I - H_gg)^(-1/2) and
    the Bell-McCaffrey degrees of freedom under a homoskedastic working model), not eval/stats.h's
    closed forms. The same machinery's CR1 is first checked against statsmodels' OLS with
    cov_type='cluster', use_t=True."""
    y, g = np.asarray(y, dtype=np.float64), np.asarray(g)
    groups = sorted(set(g.tolist()))
    N, G = len(y), len(groups)
    X = np.ones((N, 1))
    bread = np.linalg.inv(X.T @ X)
    beta = bread @ X.T @ y
    u = y - X @ beta
    rows = [np.flatnonzero(g == k) for k in groups]
    res = sm.OLS(y, X).fit(cov_type="cluster", cov_kwds={"groups": g}, use_t=True)
    meat1 = sum(np.outer(X[r].T @ u[r], X[r].T @ u[r]) for r in rows)
    v1 = (G / (G - 1)) * (N - 1) / (N - 1) * (bread @ meat1 @ bread)[0, 0]  # CR1: (N-1)/(N-k), k = 1
    q1 = scipy.stats.t.ppf((1 + level) / 2, G - 1)
    lo1, hi1 = (float(x) for x in res.conf_int(1 - level)[0])
    assert abs(float(res.params[0]) - beta[0]) <= 1e-12 * (1 + abs(beta[0])), (res.params, beta)
    assert abs(float(res.bse[0]) - np.sqrt(v1)) <= 1e-10 * np.sqrt(v1) + 1e-300, (res.bse, np.sqrt(v1))
    assert abs(lo1 - (beta[0] - q1 * np.sqrt(v1))) <= 1e-10 * (abs(lo1) + 1e-12), (lo1, beta[0] - q1 * np.sqrt(v1))
    H = lambda r: X[r] @ bread @ X[r].T                    # the cluster's block of the hat matrix
    A = []
    for r in rows:
        lam, vec = np.linalg.eigh(np.eye(len(r)) - H(r))
        A.append(vec @ np.diag(lam ** -0.5) @ vec.T)      # (I - H_gg)^(-1/2)
    meat2 = sum(np.outer(X[r].T @ a @ u[r], X[r].T @ a @ u[r]) for r, a in zip(rows, A))
    v2 = (bread @ meat2 @ bread)[0, 0]
    # Bell-McCaffrey: V = u' (sum_g c_g c_g') u with u = (I - H) e; under e ~ N(0, I) its
    # Satterthwaite df is (sum lam)^2 / sum lam^2 over the eigenvalues of Gm' Gm, where Gm's
    # column g is (I - H) c_g and c_g is zero outside cluster g, A_g X_g bread there.
    M = np.zeros((N, G))
    for k, (r, a) in enumerate(zip(rows, A)):
        c = np.zeros(N)
        c[r] = (a @ X[r] @ bread)[:, 0]
        M[:, k] = c - X @ (bread @ (X.T @ c))
    lam = np.linalg.eigvalsh(M.T @ M)
    df = float(lam.sum() ** 2 / (lam ** 2).sum())
    q = float(scipy.stats.t.ppf((1 + level) / 2, df))
    se = float(np.sqrt(v2))
    return {"delta": float(beta[0]), "se": se, "df": df, "lo": float(beta[0] - q * se), "hi": float(beta[0] + q * se),
            "statsmodels_cr1": [lo1, hi1]}
