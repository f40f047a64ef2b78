package idspill

// Path is the Set's file's name (gone while the Set is open, but on Windows), for the
// tests that check it is removed.
func (s *Set) Path() string { return s.path }
