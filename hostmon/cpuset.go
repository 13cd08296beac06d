package hostmon

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// CPUSet is a set of logical CPU numbers, sorted ascending, without
// duplicates. The nil CPUSet is the empty set. Its text form is the kernel's
// CPU list format ("0-3,8,10-11"), as in /sys/devices/system/cpu/online.
type CPUSet []int

// NewCPUSet returns the set of the given CPUs, sorted, duplicates removed.
func NewCPUSet(cpus ...int) CPUSet {
	s := slices.Clone(cpus)
	slices.Sort(s)
	return CPUSet(slices.Compact(s))
}

// ParseCPUList parses the kernel's CPU list format: comma-separated CPU
// numbers and inclusive ranges ("0-3,8"), surrounding white space and an
// empty list allowed. It rejects negative numbers, reversed ranges and CPU
// numbers above 65535.
func ParseCPUList(s string) (CPUSet, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, nil
	}
	var out []int
	for part := range strings.SplitSeq(s, ",") {
		part = strings.TrimSpace(part)
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := parseCPUNumber(lo)
		if err != nil {
			return nil, fmt.Errorf("hostmon: CPU list %q: %w", s, err)
		}
		b := a
		if isRange {
			if b, err = parseCPUNumber(hi); err != nil {
				return nil, fmt.Errorf("hostmon: CPU list %q: %w", s, err)
			}
			if b < a {
				return nil, fmt.Errorf("hostmon: CPU list %q: reversed range %q", s, part)
			}
		}
		for c := a; c <= b; c++ {
			out = append(out, c)
		}
	}
	return NewCPUSet(out...), nil
}

// maxCPU bounds parsed CPU numbers so a corrupt file cannot make a parser
// allocate without limit (the kernel's NR_CPUS is at most 8192).
const maxCPU = 65535

func parseCPUNumber(s string) (int, error) {
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 || n > maxCPU {
		return 0, fmt.Errorf("bad CPU number %q", s)
	}
	return n, nil
}

// String returns the set in the kernel's CPU list format, ranges of three or
// more CPUs collapsed ("0-3,8,10,11"); "" for the empty set.
func (s CPUSet) String() string {
	var b strings.Builder
	for i := 0; i < len(s); {
		j := i
		for j+1 < len(s) && s[j+1] == s[j]+1 {
			j++
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(s[i]))
		switch {
		case j-i >= 2:
			b.WriteByte('-')
			b.WriteString(strconv.Itoa(s[j]))
		case j-i == 1:
			b.WriteByte(',')
			b.WriteString(strconv.Itoa(s[j]))
		}
		i = j + 1
	}
	return b.String()
}

// Contains reports whether cpu is in the set.
func (s CPUSet) Contains(cpu int) bool {
	_, ok := slices.BinarySearch(s, cpu)
	return ok
}

// Union returns the CPUs in s or t.
func (s CPUSet) Union(t CPUSet) CPUSet {
	return NewCPUSet(append(slices.Clone(s), t...)...)
}

// Intersect returns the CPUs in both s and t.
func (s CPUSet) Intersect(t CPUSet) CPUSet {
	var out CPUSet
	for _, c := range s {
		if t.Contains(c) {
			out = append(out, c)
		}
	}
	return out
}

// Minus returns the CPUs in s and not in t.
func (s CPUSet) Minus(t CPUSet) CPUSet {
	var out CPUSet
	for _, c := range s {
		if !t.Contains(c) {
			out = append(out, c)
		}
	}
	return out
}

// Equal reports whether s and t hold the same CPUs.
func (s CPUSet) Equal(t CPUSet) bool { return slices.Equal(s, t) }

// Words returns the set for a sentence: "CPU 3", or "CPUs 0,2" for any
// other size.
func (s CPUSet) Words() string {
	if len(s) == 1 {
		return "CPU " + strconv.Itoa(s[0])
	}
	return "CPUs " + s.String()
}
