package bench

import (
	"math"
	"slices"
	"time"
)

// percentile returns the p-th percentile (0 < p ≤ 100) of ds by the nearest-rank
// method, in milliseconds; NaN when ds is empty.
func percentile(ds []time.Duration, p float64) float64 {
	if len(ds) == 0 {
		return math.NaN()
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	rank := int(math.Ceil(p / 100 * float64(len(s))))
	return ms(s[min(max(rank, 1), len(s))-1])
}

// median returns the median of ds in milliseconds (percentile 50).
func median(ds []time.Duration) float64 { return percentile(ds, 50) }

// ms returns d in milliseconds.
func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// scale returns ds with each duration divided by n (per agent reply, per activity).
func scale(ds []time.Duration, n int) []time.Duration {
	out := make([]time.Duration, len(ds))
	for i, d := range ds {
		out[i] = d / time.Duration(n)
	}
	return out
}
