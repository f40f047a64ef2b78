package transfer

import (
	"fmt"
	"net/url"
	"path/filepath"
)

// FileURI returns the file:// URI of an absolute path, e.g. "file:///var/x%20y.json"
// for "/var/x y.json".
func FileURI(path string) string { return (&url.URL{Scheme: "file", Path: path}).String() }

// PathOf returns the absolute path of a file:// URI (host empty or "localhost"); any
// other URI is an error.
func PathOf(uri string) (string, error) {
	u, err := url.Parse(uri)
	if err != nil || u.Scheme != "file" || !filepath.IsAbs(u.Path) || (u.Host != "" && u.Host != "localhost") {
		return "", fmt.Errorf("document store: %q is not a file:// URI of an absolute path", uri)
	}
	return u.Path, nil
}
