package workflows

// CarryBytes exposes carryBytes to the tests.
var CarryBytes = carryBytes
