package chatstate

import (
	"slices"
	"strconv"
	"strings"
)

// upgrade is one step of the upgrade table: how this reader reads a document of an
// older schemaVersion.
type upgrade struct {
	// verify checks a document of this version as read, its digest included, by the
	// rules of this version; it returns a *FieldError.
	verify func(doc []byte) error
	// up returns the document as the next version, without a digest: the digest was
	// checked on the document as read, and Decode computes the new one.
	up func(doc []byte) ([]byte, error)
}

// upgrades maps each older schemaVersion this reader upgrades to its step. Version 1 is
// the first version, so the table is empty. When version N+1 is made, the entry for N
// is added here (with golden files of version N kept in testdata/golden for good), and
// Decode reads an N document by verifying it by N's rules, then applying up for N, N+1,
// … until SchemaVersion, and then reading the result as a current document.
var upgrades = map[int]upgrade{}

// knownVersions lists the versions this reader reads, as "1" or "1, 2 and 3".
func knownVersions() string {
	vs := []int{SchemaVersion}
	for v := range upgrades {
		vs = append(vs, v)
	}
	slices.Sort(vs)
	s := make([]string, len(vs))
	for i, v := range vs {
		s[i] = strconv.Itoa(v)
	}
	if len(s) == 1 {
		return s[0]
	}
	return strings.Join(s[:len(s)-1], ", ") + " and " + s[len(s)-1]
}

// upgradeFrom verifies doc, a document of version v < SchemaVersion, and upgrades it to
// SchemaVersion (without digest).
func upgradeFrom(doc []byte, v int) ([]byte, error) {
	if err := upgrades[v].verify(doc); err != nil {
		return nil, err
	}
	for ; v < SchemaVersion; v++ {
		step, ok := upgrades[v]
		if !ok {
			return nil, fieldErr("schemaVersion", "no upgrade from version "+strconv.Itoa(v)+" to "+strconv.Itoa(v+1))
		}
		var err error
		if doc, err = step.up(doc); err != nil {
			return nil, err
		}
	}
	return doc, nil
}
