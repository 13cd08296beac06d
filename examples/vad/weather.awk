# weather.awk: the weather section of bench.sh's summary, read from the go
# test -bench output of BenchmarkVAD (bench.txt). It prints how many blocks
# the contention screen called contended (each block's log holds one
# "host: contended: ..." or "host: clean ..." line; testing may cut a long
# log, so only screened blocks are counted) and the median and largest
# foreign-%, psi-some-% and load1 of the result lines. When most screened
# blocks were contended it says what that costs the verdicts and what to do
# (decodegap.Compare sets aside a round only when its blocks disagree: some
# contended, others not).
#
#   awk -v count=ROUNDS -f weather.awk bench.txt
#
# count is the rounds run (BENCH_COUNT); the advice suggests twice as many.
function median(a, n,    i, j, t) {
	for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j-1] > a[j]; j--) { t = a[j]; a[j] = a[j-1]; a[j-1] = t }
	return n % 2 ? a[(n+1)/2] : (a[n/2] + a[n/2+1]) / 2
}
function fig(name, a, n,    m, i, mx) {
	if (n == 0) return name " unavailable"
	mx = a[1]; for (i = 2; i <= n; i++) if (a[i] > mx) mx = a[i]
	m = median(a, n)
	return sprintf("%s median %.3g (max %.3g)", name, m, mx)
}
/^BenchmarkVAD\// {
	blocks++
	for (i = 3; i < NF; i++) {
		if ($(i+1) == "foreign-%") fo[++nfo] = +$i
		else if ($(i+1) == "psi-some-%") ps[++nps] = +$i
		else if ($(i+1) == "load1") ld[++nld] = +$i
	}
}
/^--- BENCH: / { vad = ($3 ~ /^BenchmarkVAD\//) }
# Under -test.v a Compare block's log follows its name, not a --- BENCH:
# header; it opens with the line naming decodegap.Compare.
/\(decodegap\.Compare: the order and the verdicts/ { vad = 1 }
vad && /host: contended/ { contended++ }
vad && /host: clean/ { clean++ }
vad && /host: contention figures unavailable/ && why == "" { why = $0; sub(/.*host: contention figures unavailable /, "", why) }
END {
	screened = contended + clean
	if (screened == 0) {
		printf "  the contention screen did not run on any of the %d blocks %s\n", blocks, why
		printf "  %s, %s, %s\n", fig("foreign-%", fo, nfo), fig("psi-some-%", ps, nps), fig("load1", ld, nld)
		exit
	}
	printf "  contended: %d of the %d blocks screened (%.0f%%); over all %d blocks: %s, %s, %s\n",
		contended, screened, 100 * contended / screened, blocks, fig("foreign-%", fo, nfo), fig("psi-some-%", ps, nps), fig("load1", ld, nld)
	if (2 * contended > screened) {
		print "  Most blocks ran while other work used these CPUs. Pairing within a round cancels the weather its arms"
		print "  shared, not the noise it adds: the intervals are wider and more verdicts undecided, and a round whose"
		print "  arms met different weather (some blocks contended, others not) is set aside when its values show it"
		print "  (their spread over twice the other rounds'). For firmer verdicts: run one"
		print "  benchmark at a time on this host (go run ./cmd/decodegap lock -- make bench), use a quieter host, or run"
		print "  more rounds (BENCH_COUNT=" 2 * count " make bench)."
	} else if (contended > 0) {
		print "  The verdicts set aside each round whose arms met different weather (some blocks contended, others not)"
		print "  when its values show it (their spread over twice the other rounds')."
	}
}
