package devserver

import "syscall"

// setParentDeathSignal makes Linux send SIGTERM to the server when the thread
// that started it exits; startAndWatch keeps that thread for as long as the
// server runs, so the signal comes when this process dies (even by SIGKILL).
func setParentDeathSignal(attr *syscall.SysProcAttr) { attr.Pdeathsig = syscall.SIGTERM }
