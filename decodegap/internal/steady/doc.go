// Package steady finds where a series of per-step latencies settles, and
// classifies the series with the classes of Barrett et al., "Virtual Machine
// Warmup Blows Hot and Cold" (OOPSLA 2017): flat, warm-up, slowdown, or no
// steady state. decodegap calls Detect on the latencies recorded by Run and
// reports only the steady window.
//
// # The rule
//
// Detect works on the per-step latencies (nanoseconds, in run order), cut
// into windows of Params.Window samples (default 32); the last window absorbs the remainder when the length is not a
// multiple of the window. Changepoints fall only on window boundaries, so the
// steady window always starts at a multiple of the window.
//
//  1. Too short. Fewer than 2 whole windows: no steady state.
//
//  2. Changepoints, by binary segmentation with a rank test. In a segment,
//     every interior window boundary t is a candidate; its statistic is the
//     Mann–Whitney rank sum of the samples before t against those after it,
//     standardised by its null variance (ties corrected) times the
//     autocorrelation factor f below. The boundary with the largest |z| is a
//     changepoint when its two-sided p-value times the number of candidates
//     (Bonferroni) is below Params.Alpha (default 0.001); both sides are then
//     searched the same way, down to segments of two windows, most
//     significant split first and at most 256 changepoints (a series that
//     changes more often than that has no steady state anyway).
//
//     Why ranks: latency noise is neither normal nor unimodal, and the
//     penalty of a parametric cost (PELT with a Gaussian cost, as Barrett et
//     al. used after removing outliers) is right only for the noise it
//     assumes. A rank test's false-alarm rate on samples of one distribution
//     is at most Alpha whatever that distribution is: occasional 10x
//     outliers, a Pareto tail, or a bimodal series whose every sample comes
//     at random from one of two levels are all one distribution, not a level
//     change. A bimodal series is therefore reported as flat; its median may
//     sit on either mode, and saying that it is bimodal is nullband's job.
//
//     Why f: samples close in time are correlated on a real host, which
//     makes any test that assumes independence see changes in noise. f is
//     estimated once by batch means: the variance of the windows' rank sums
//     (robustly, from the smallest 90% of the squared differences between
//     windows two apart, so that a few level changes do not count) over its
//     value for independent samples; f is at least 1, and 1 when there are fewer than 6
//     windows. It corrects for correlation shorter than a window; slower
//     weather is left to the margin of step 3.
//
//  3. Levels and merging. The level of a segment is the median of its
//     samples. A rank test on thousands of samples finds changes too small to
//     matter, so adjacent segments are merged, closest pair first, while their
//     levels differ by at most the margin max(Params.Tolerance × the smaller
//     level, σ). Params.Tolerance is relative (default 0.02); σ is the
//     window-to-window noise, 1.4826 × the median absolute difference of
//     consecutive window medians / √2: a change smaller than the scatter of
//     one window's median is not one a person can act on. (Barrett et al.
//     likewise treat segments within a variance-based margin as equivalent.)
//     A merge is refused when the merged segment would drift. Last, a
//     segment of one window whose level lies strictly between its
//     neighbours' is the window in which a step happened (its samples mix
//     both levels); it joins the segment before it. Likewise the first
//     window of the last segment moves to the segment before it, at most
//     MinTail times, while it holds more samples on the earlier level's side
//     of the midpoint between the two levels than the rest of the last
//     segment makes likely (binomial tail, rate (count+1)/(n+2) from the
//     rest, p < 0.01; looser than Alpha because a false move costs one
//     window while a missed one leaves samples of the earlier level in the
//     steady window's tail percentiles).
//
//  4. Drift. A segment of at least 3 windows drifts when both: the change of
//     level across it, estimated as its length times the median slope
//     between window medians half the segment apart, exceeds the margin; and
//     the Spearman rank correlation of its samples with their index has the
//     same sign and is significant at Alpha (with f as in step 2). A slower
//     drift moves the level by less than the margin across the steady window
//     and is not told apart from a steady level.
//
//  5. Classes, on the merged segments, in this order:
//     - no steady state when there is a changepoint and the last segment
//     holds fewer than Params.MinTail windows (default max(4, ⌈windows/5⌉);
//     Barrett et al. likewise reject a last changepoint near the end of the
//     run): the series was still changing near its end, so its tail is too
//     short to trust;
//     - no steady state when the last segment drifts;
//     - flat when one segment remains: the steady window is the whole series;
//     - slowdown when an earlier segment is faster than the last by more
//     than the margin;
//     - warm-up when an earlier segment is slower than the last by more than
//     the margin (and none is faster);
//     - otherwise flat: every level is within the margin of the last, but
//     merging them would drift, so the steady window is the last segment.
//     Except when there is no steady state, the steady window is the last
//     segment: Result.Start to the end of the series.
//
// # Suggest and Reason
//
// When there is no steady state, or the steady window holds fewer than 8
// windows, Result.Suggest is the number of recorded iterations to ask for next
// time, the N of -benchtime=Nx: twice the samples given, at least 20 windows,
// times Params.Stride, rounded up to two significant digits (2000 → 4000,
// 1234 → 2500, 20 samples in windows of 32 → 640). A drift or a late change
// may need more; the next run says so.
//
// Result.Reason names why (an enumerated value), and Result's other fields
// hold the numbers behind it; Detect writes no sentences. Two medians that
// agree to six significant digits are never called a change (SameMedian).
//
// # Cost
//
// Detect sorts the samples once (O(n log n)); every split and merge after that
// keeps the segments' samples sorted in O(segment length). It allocates in
// proportion to the series, retains none of it, and takes at most MaxSamples
// (2^23) samples; measured costs are in docs/ (go test -bench Detect100k).
package steady
