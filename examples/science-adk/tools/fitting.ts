/** Curve fitting tools. */

/** The result of {@link power_law_fit}. */
export interface PowerLawFit {
  exponent: number;
  coefficient: number;
  r_squared: number;
  n: number;
}

/**
 * Fit y = C * x^a by ordinary least squares in log-log space.
 *
 * Returns {exponent, coefficient, r_squared, n}. Throws if the inputs differ in length or contain
 * non-positive values, both of which make the log transform undefined rather than merely imprecise.
 */
export function power_law_fit(x: number[], y: number[]): PowerLawFit {
  if (x.length !== y.length) {
    throw new RangeError(`x and y differ in length (${x.length} vs ${y.length})`);
  }
  if (x.length < 2) throw new RangeError("at least two points are needed");
  if ([...x, ...y].some((v) => !(v > 0))) {
    throw new RangeError("x and y must be strictly positive for a log-log fit");
  }
  const lx = x.map(Math.log);
  const ly = y.map(Math.log);
  const mx = _mean(lx);
  const my = _mean(ly);
  let sxy = 0;
  let sxx = 0;
  let syy = 0;
  for (let i = 0; i < lx.length; i++) {
    const dx = (lx[i] as number) - mx;
    const dy = (ly[i] as number) - my;
    sxy += dx * dy;
    sxx += dx * dx;
    syy += dy * dy;
  }
  if (sxx === 0) throw new RangeError("x has no spread; the exponent is undefined");
  const exponent = sxy / sxx;
  const coefficient = Math.exp(my - exponent * mx);
  const r_squared = syy === 0 ? 1 : (sxy * sxy) / (sxx * syy);
  return { exponent, coefficient, r_squared, n: x.length };
}

/** Private helper: the leading underscore keeps it out of the tool list. */
export function _mean(values: number[]): number {
  return values.reduce((a, b) => a + b, 0) / values.length;
}
