// Package steady finds where a series of per-step latencies settles, and
// classifies the series with the classes of Barrett et al., "Virtual Machine
// Warmup Blows Hot and Cold" (OOPSLA 2017): flat, warm-up, slowdown, or no
// steady state. decodegap calls Detect on the latencies recorded by Run and
// reports only the steady window.
//
// The rule, step by step, is Detect's documentation: windows of
// Params.Window samples; changepoints at window boundaries by binary
// segmentation with a Mann–Whitney rank test (autocorrelation-corrected,
// Bonferroni, Params.Alpha); adjacent levels within max(Params.Tolerance,
// the window-to-window noise) merged unless that drifts; no steady state
// when the last segment is shorter than Params.MinTail windows after a
// change or drifts; otherwise flat, slowdown or warm-up by the earlier
// levels. Ranks make the false-alarm rate hold whatever the noise's
// distribution: outliers, heavy tails and bimodal series are noise, not
// changes.
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
