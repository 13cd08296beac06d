package verdicttext

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestModesLineOnlyWhenMostBlocksHaveModes(t *testing.T) {
	assert.Equal(t, "modes: intra2's steps had two or more modes in 9 of 12 blocks (mvalue 3.61, ≥ 3.2): a verdict on its sec/op or p50-sec/op compares points that can sit between the modes; read p90-sec/op and the blocks' max-ns/op beside it.",
		ModesLine("intra2", 9, 12, 3.614, 3.2))
	assert.NotEmpty(t, ModesLine("a", 6, 12, 3.3, 3.2), "half the blocks")
	assert.Empty(t, ModesLine("a", 5, 12, 3.3, 3.2), "fewer than half")
	assert.Empty(t, ModesLine("a", 0, 0, 0, 3.2), "no block")
}
