package activities

// SaysYes exposes saysYes to the external tests.
var SaysYes = saysYes
