package report

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"golang.org/x/perf/benchunit"
)

// A figure of any size prints in a bounded number of characters: the
// regression printed B/A of 1e308 ns/op against 1000 as 306 digits.
func TestFixedIsBounded(t *testing.T) {
	for _, c := range []struct {
		x       float64
		prec    int
		want    string
		wantSig string
	}{
		{1.0434, 3, "1.043", "+1.043"},
		{-0.25, 1, "-0.2", "-0.2"}, // %.1f rounds half to even
		{0, 3, "0.000", "+0.000"},
		{999999.4, 0, "999999", "+999999"},
		{1e6, 3, "1.00e+06", "+1.00e+06"},
		{1.0000997e305, 3, "1.00e+305", "+1.00e+305"},
		{-1e308, 1, "-1.00e+308", "-1.00e+308"},
		{math.MaxFloat64, 3, "1.80e+308", "+1.80e+308"},
		{1e-300, 3, "0.000", "+0.000"},
	} {
		assert.Equal(t, c.want, Fixed(c.x, c.prec), "%g", c.x)
		assert.Equal(t, c.wantSig, Signed(c.x, c.prec), "%g", c.x)
		assert.LessOrEqual(t, len(Fixed(c.x, c.prec)), 12)
	}
	assert.Equal(t, "+Inf", Fixed(math.Inf(1), 3))
	assert.Equal(t, "0.25", Fixed(0.25, -1))
	sc := benchunit.CommonScale([]float64{1e308}, benchunit.Decimal)
	assert.Equal(t, "1.00e+296T", Scaled(1e308, sc))
	sc = benchunit.CommonScale([]float64{123456789}, benchunit.Decimal)
	assert.Equal(t, sc.Format(123456789), Scaled(123456789, sc))
	assert.Equal(t, "NaN", Signed(math.NaN(), 3))
}
