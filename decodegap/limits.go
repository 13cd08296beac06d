package decodegap

import (
	"errors"
	"fmt"
	"time"
)

// ErrLimit is the error, wrapped with the field and its value, of a size
// over one of decodegap's documented limits: MaxSessions, MaxGap,
// MaxRecordBytes. Test for it with errors.Is.
var ErrLimit = errors.New("over decodegap's limit")

const (
	// MaxSessions is the most RunConfig.Sessions: each session is a locked
	// OS thread, and Go ends a process that passes debug.SetMaxThreads
	// (10000 by default) with "thread exhaustion".
	MaxSessions = 1024
	// MaxGap is the longest gap that may be requested: Gap.Mean, each
	// Gap.Trace entry and Gap.Spin. Beyond it the arithmetic of the gap
	// clock (int64 ns since an origin) would overflow and the run would
	// go on with no gap at all.
	MaxGap = time.Hour
	// MaxRecordBytes bounds the per-step records of one Run: 16 bytes a
	// recorded step (32 in an open loop), at most 4,194,304 steps per
	// instance, times RunConfig.Sessions.
	MaxRecordBytes = 4 << 30
)

// limitGap checks the gaps of g against MaxGap; typ names the config.
func limitGap(typ string, g *Gap) error {
	switch {
	case g.Mean > MaxGap:
		return fmt.Errorf("%s.Gap.Mean = %v: %w: at most %v (MaxGap)", typ, g.Mean, ErrLimit, MaxGap)
	case g.Spin > MaxGap:
		return fmt.Errorf("%s.Gap.Spin = %v: %w: at most %v (MaxGap)", typ, g.Spin, ErrLimit, MaxGap)
	}
	for i, d := range g.Trace {
		if d > MaxGap {
			return fmt.Errorf("%s.Gap.Trace[%d] = %v: %w: at most %v (MaxGap)", typ, i, d, ErrLimit, MaxGap)
		}
	}
	return nil
}

// limitSessions checks RunConfig.Sessions, and the memory its records take
// at n recorded steps, against MaxSessions and MaxRecordBytes.
func (c *RunConfig) limitSessions(n int) error {
	if c.Sessions > MaxSessions {
		return fmt.Errorf("RunConfig.Sessions = %d: %w: at most %d (MaxSessions: one locked OS thread each)", c.Sessions, ErrLimit, MaxSessions)
	}
	per := int64(16)
	if c.Gap.Open {
		per = 32
	}
	inst := int64(max(1, c.Sessions))
	if c.Null {
		inst = 2
	}
	if need := inst * int64(min(max(n, 1), maxSamples)) * per; need > MaxRecordBytes {
		return fmt.Errorf("RunConfig.Sessions = %d at b.N = %d: %w: the records would take %s, over MaxRecordBytes (%s): lower -benchtime or RunConfig.Sessions",
			c.Sessions, n, ErrLimit, fmtBytes(need), fmtBytes(MaxRecordBytes))
	}
	return nil
}
