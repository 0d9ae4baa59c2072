package main

import (
	"math"
	"sort"
	"time"
)

// stats summarises samples. Percentiles are nearest-rank.
type stats struct {
	N      int     `json:"n"`
	Median float64 `json:"median"`
	P10    float64 `json:"p10"`
	P90    float64 `json:"p90"`
	Min    float64 `json:"min"`
	Max    float64 `json:"max"`
}

func summary(xs []float64) stats {
	if len(xs) == 0 {
		return stats{}
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	n := len(s)
	med := s[n/2]
	if n%2 == 0 {
		med = (s[n/2-1] + s[n/2]) / 2
	}
	rank := func(p float64) float64 {
		i := int(math.Ceil(p*float64(n))) - 1
		if i < 0 {
			i = 0
		}
		return s[i]
	}
	return stats{N: n, Median: round3(med), P10: round3(rank(0.10)), P90: round3(rank(0.90)), Min: round3(s[0]), Max: round3(s[n-1])}
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func round3(x float64) float64 { return math.Round(x*1000) / 1000 }

func mapSlice[T any](xs []T, f func(T) float64) []float64 {
	out := make([]float64, len(xs))
	for i, x := range xs {
		out[i] = f(x)
	}
	return out
}
