package agents

import (
	"errors"
	"strings"
	"testing"
)

// An endpoint's baseURL that holds a credential (user info, or a query such as
// ?api-key=…, which go-openai could not use anyway: it appends the path after it)
// is refused without quoting the URL: it would reach the worker's log, and errors
// and histories through connection errors, where only apiKeyEnv's value is redacted.
func TestEndpointBaseURLMustNotHoldCredentials(t *testing.T) {
	const secret = "azure-secret-DISTINCT-0099"
	t.Setenv("AZ_KEY", secret)
	for _, base := range []string{
		"https://user:" + secret + "@api.example.com/v1",
		"https://${AZ_KEY}@api.example.com/v1",
		"https://api.example.com/v1?api-key=${AZ_KEY}",
	} {
		_, err := ParseConfig([]byte(`{"endpoints":{"az":{"baseURL":"` + base + `","apiKeyEnv":"AZ_KEY"}},"agents":[{"id":"a","model":"m","endpoint":"az"}]}`))
		if err == nil {
			t.Errorf("%s: accepted", base)
			continue
		}
		if !errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), `endpoint "az": baseURL must not hold credentials`) {
			t.Errorf("%s: %v", base, err)
		}
		if strings.Contains(err.Error(), secret) {
			t.Errorf("%s: the error quotes the secret: %v", base, err)
		}
	}
	if _, err := ParseConfig([]byte(`{"endpoints":{"az":{"baseURL":"https://api.example.com/openai/v1","apiKeyEnv":"AZ_KEY"}},"agents":[{"id":"a","model":"m","endpoint":"az"}]}`)); err != nil {
		t.Errorf("a plain URL: %v", err)
	}
}
