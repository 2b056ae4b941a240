package difftest

import "time"

// Shrink returns a script with as few of s's ops as it finds that still
// fails (fails reports whether a script does), by delta debugging: it
// tries without each of n chunks of the ops, keeps any that still fails,
// and refines n until single ops, or until the deadline. s itself must
// fail.
func Shrink(s *Script, fails func(*Script) bool, deadline time.Time) *Script {
	best := *s
	ops := s.Ops
	try := func(cand []Op) bool {
		c := best
		c.Ops = cand
		return fails(&c)
	}
	n := 2
	for len(ops) >= 2 && time.Now().Before(deadline) {
		size := (len(ops) + n - 1) / n
		reduced := false
		for start := 0; start < len(ops) && time.Now().Before(deadline); start += size {
			end := min(start+size, len(ops))
			cand := append(append([]Op(nil), ops[:start]...), ops[end:]...)
			if len(cand) > 0 && try(cand) {
				ops = cand
				n = max(n-1, 2)
				reduced = true
				break
			}
		}
		if reduced {
			continue
		}
		if size == 1 {
			break
		}
		n = min(2*n, len(ops))
	}
	best.Ops = ops
	return &best
}
