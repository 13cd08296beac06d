package decodegap

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// A round is quarantined for contention only when its arms met different
// weather; a host contended throughout (as shared hosts are) keeps its rounds.
func TestUnsharedWeather(t *testing.T) {
	block := func(ok, c bool) *result {
		r := &result{}
		r.host.ok, r.host.verdict.Contended = ok, c
		return r
	}
	c, q, none := block(true, true), block(true, false), block(false, false)
	assert.False(t, unshared(c, c, c), "all contended: shared weather")
	assert.False(t, unshared(q, q, q))
	assert.True(t, unshared(c, q, c))
	assert.True(t, unshared(q, q, c))
	assert.True(t, unshared(none, c, c), "a block that was not screened counts as not contended")
}
