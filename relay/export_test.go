package relay

// ThrottleFailures is how many wrong credentials s's throttle currently counts, for tests that
// prove which requests count and which do not.
func ThrottleFailures(s *Server) int {
	s.thr.mu.Lock()
	defer s.thr.mu.Unlock()
	return s.thr.failures
}
