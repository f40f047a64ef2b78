//go:build !linux

package bench

import "time"

// pidCPU is not measured on this system.
func pidCPU(int) (time.Duration, bool) { return 0, false }
