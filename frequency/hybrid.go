package frequency

import "math"

// SampleMore returns the probability of sampling another batch of pages from a site whose sampled
// pages had the changed fraction rho, in the hybrid policy of Ghodsi, Hassanzadeh, Kamali and
// Monemizadeh (equation 1, with the papers README's erratum: the paper prints the +1 inside the
// tanh, which is not a probability):
//
//	P(ρ) = (tanh(10 (ρ − ρ0)) + 1) / 2
//
// P is a smoothed step at rho0: 0.5 at ρ = ρ0, increasing in ρ, about 0.12 at ρ0 − 0.1 and 0.88 at
// ρ0 + 0.1, and within 0.0025 of 0 or 1 beyond ρ0 ± 0.3. Sites whose pages change often are
// sampled again; raising rho0 from cycle to cycle moves resources from sampling to the
// change-frequency method. The result is in [0, 1] whenever ρ − ρ0 is a number (±Inf included); a
// NaN gives NaN, which a caller testing rand.Float64() < P never samples.
func SampleMore(rho, rho0 float64) float64 {
	return (math.Tanh(10*(rho-rho0)) + 1) / 2
}
