"""The standard normal's inverse over a whole array, to the bit what CPython's
statistics.NormalDist().inv_cdf gives one value at a time: the joint draws (explain/draws.py) turn
hundreds of thousands of uniforms into normals a plan, and must draw the same numbers on every
platform as the one-at-a-time reference does."""

from __future__ import annotations

import math

import numpy as np

# Wichura's AS241 as CPython's statistics module writes it (_normal_dist_inv_cdf): the numerator and
# denominator coefficients, highest power first, of the central region and of the two tails
_CENTRAL = (
    (
        2.5090809287301226727e3,
        3.3430575583588128105e4,
        6.7265770927008700853e4,
        4.5921953931549871457e4,
        1.3731693765509461125e4,
        1.9715909503065514427e3,
        1.3314166789178437745e2,
        3.3871328727963666080e0,
    ),
    (
        5.2264952788528545610e3,
        2.8729085735721942674e4,
        3.9307895800092710610e4,
        2.1213794301586595867e4,
        5.3941960214247511077e3,
        6.8718700749205790830e2,
        4.2313330701600911252e1,
        1.0,
    ),
)
_NEAR = (
    (
        7.74545014278341407640e-4,
        2.27238449892691845833e-2,
        2.41780725177450611770e-1,
        1.27045825245236838258e0,
        3.64784832476320460504e0,
        5.76949722146069140550e0,
        4.63033784615654529590e0,
        1.42343711074968357734e0,
    ),
    (
        1.05075007164441684324e-9,
        5.47593808499534494600e-4,
        1.51986665636164571966e-2,
        1.48103976427480074590e-1,
        6.89767334985100004550e-1,
        1.67638483018380384940e0,
        2.05319162663775882187e0,
        1.0,
    ),
)
_FAR = (
    (
        2.01033439929228813265e-7,
        2.71155556874348757815e-5,
        1.24266094738807843860e-3,
        2.65321895265761230930e-2,
        2.96560571828504891230e-1,
        1.78482653991729133580e0,
        5.46378491116411436990e0,
        6.65790464350110377720e0,
    ),
    (
        2.04426310338993978564e-15,
        1.42151175831644588870e-7,
        1.84631831751005468180e-5,
        7.86869131145613259100e-4,
        1.48753612908506148525e-2,
        1.36929880922735805310e-1,
        5.99832206555887937690e-1,
        1.0,
    ),
)


def _horner(coefs: tuple[float, ...], r: np.ndarray) -> np.ndarray:
    out = coefs[0] * r + coefs[1]
    for c in coefs[2:]:
        out = out * r + c
    return out


def inverse_normal(p: np.ndarray) -> np.ndarray:
    """NormalDist().inv_cdf of every p in (0, 1), the same bits as one at a time: the same
    operations in the same order (numpy's + - * / and sqrt are IEEE-exact), and logs by math.log
    (numpy's differ from the C library's in the last bit on some machines)."""
    q = p - 0.5
    central = np.abs(q) <= 0.425
    r = 0.180625 - q * q
    x = _horner(_CENTRAL[0], r) * q / _horner(_CENTRAL[1], r)
    tail = np.where(q <= 0.0, p, 1.0 - p)[~central]
    if tail.size:
        t = np.sqrt(-np.fromiter(map(math.log, tail.tolist()), dtype=float, count=tail.size))
        near = t <= 5.0
        u = np.where(near, t - 1.6, t - 5.0)
        far = np.where(near, _horner(_NEAR[0], u) / _horner(_NEAR[1], u), _horner(_FAR[0], u) / _horner(_FAR[1], u))
        x[~central] = np.where(q[~central] < 0.0, -far, far)
    return x
