package verdicttext

import "fmt"

// ModesLine says that an arm's steps had two or more modes in multi of
// blocks blocks (their mvalue at or above threshold; median is the
// blocks' median mvalue), so that a verdict on its mean or median is read
// with that in mind; "" when fewer than half its blocks were multimodal.
func ModesLine(arm string, multi, blocks int, median, threshold float64) string {
	if blocks == 0 || 2*multi < blocks {
		return ""
	}
	return fmt.Sprintf("modes: %s's steps had two or more modes in %d of %d blocks (mvalue %.2f, ≥ %.1f): a verdict on its sec/op or p50-sec/op compares points that can sit between the modes; read p90-sec/op and the blocks' max-ns/op beside it.",
		arm, multi, blocks, median, threshold)
}
