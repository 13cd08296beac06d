package durfmt

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestNs(t *testing.T) {
	for _, tc := range []struct {
		ns   float64
		want string
	}{
		{0, "0s"},
		{1, "1ns"},
		{12.345, "12.3ns"},
		{999, "999ns"},
		{999.6, "1µs"}, // rounds up into the next unit
		{1000, "1µs"},
		{66_400, "66.4µs"},
		{250_000, "250µs"},
		{999_960, "1ms"},
		{1_500_000, "1.5ms"},
		{32_000_400, "32ms"},
		{12_340_000_000, "12.3s"},
		{4_000_000_000_000, "4000s"},
		{-66_400, "-66.4µs"},
		{math.NaN(), "n/a"},
		{math.Inf(1), "+Inf"},
		{math.Inf(-1), "-Inf"},
	} {
		assert.Equal(t, tc.want, Ns(tc.ns), "Ns(%v)", tc.ns)
	}
}

// More digits tell apart two values that three digits print alike.
func TestNsDigits(t *testing.T) {
	assert.Equal(t, Ns(251_020), Ns(251_400))
	assert.Equal(t, "251.02µs", NsDigits(251_020, 5))
	assert.Equal(t, "251.4µs", NsDigits(251_400, 5))
	assert.Equal(t, "300µs", NsDigits(251_400, 1))
	assert.Equal(t, "300µs", NsDigits(251_400, 0), "fewer than 1 digit means 1")
	assert.Equal(t, "1.00001ms", NsDigits(1_000_010, 6))
}

func TestElapsed(t *testing.T) {
	for _, tc := range []struct {
		d    time.Duration
		want string
	}{
		{0, "0s"},
		{850_400 * time.Microsecond, "850ms"},
		{12_345 * time.Millisecond, "12.3s"},
		{245_600 * time.Millisecond, "4m6s"},
		{-1500 * time.Millisecond, "-1.5s"},
	} {
		assert.Equal(t, tc.want, Elapsed(tc.d), "Elapsed(%v)", tc.d)
	}
}
