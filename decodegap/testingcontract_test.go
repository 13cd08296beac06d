package decodegap

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestLastCall(t *testing.T) {
	cases := []struct {
		benchtime string
		n         int
		elapsed   time.Duration
		want      bool
	}{
		{"2000x", 1, 0, false}, // testing's N=1 probe
		{"2000x", 2000, 0, true},
		{"1x", 1, 0, true},
		{"1s", 1, time.Millisecond, false},
		{"1s", 5000, 999 * time.Millisecond, false},
		{"1s", 5000, 1001 * time.Millisecond, true},
		{"1s", 1e9, time.Millisecond, true},
		{"bogus", 3, 0, true},
	}
	for _, c := range cases {
		assert.Equal(t, c.want, lastCall(c.benchtime, c.n, c.elapsed), "%s N=%d elapsed=%v", c.benchtime, c.n, c.elapsed)
	}
}
