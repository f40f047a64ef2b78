//go:build !linux

package bench

import "time"

// pidCPU is not measured on this system.
func pidCPU(int) (time.Duration, bool) { return 0, false }

// loadAverage is not measured on this system.
func loadAverage() (float64, bool) { return 0, false }

// localServerPID is not looked for on this system.
func localServerPID(string) int { return 0 }
