package agentchat

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"go.temporal.io/api/enums/v1"
	"go.temporal.io/api/operatorservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/agentchat/agentchat/wire"
)

// The typed keys of the chat's search attributes (wire.Search*).
var (
	searchStatus       = temporal.NewSearchAttributeKeyKeyword(wire.SearchStatus)
	searchAgents       = temporal.NewSearchAttributeKeyKeywordList(wire.SearchAgents)
	searchTurns        = temporal.NewSearchAttributeKeyInt64(wire.SearchTurns)
	searchLastActivity = temporal.NewSearchAttributeKeyTime(wire.SearchLastActivity)
)

// searchAttributeTypes are the chat's search attributes with their types.
var searchAttributeTypes = map[string]enums.IndexedValueType{
	wire.SearchStatus:       enums.INDEXED_VALUE_TYPE_KEYWORD,
	wire.SearchAgents:       enums.INDEXED_VALUE_TYPE_KEYWORD_LIST,
	wire.SearchTurns:        enums.INDEXED_VALUE_TYPE_INT,
	wire.SearchLastActivity: enums.INDEXED_VALUE_TYPE_DATETIME,
}

// SearchAttributesCommand is the Temporal CLI command that registers the chat's search
// attributes in namespace ns.
func SearchAttributesCommand(ns string) string {
	names := make([]string, 0, len(searchAttributeTypes))
	for n := range searchAttributeTypes {
		names = append(names, n)
	}
	slices.Sort(names)
	var b strings.Builder
	fmt.Fprintf(&b, "temporal operator search-attribute create --namespace %s", ns)
	for _, n := range names {
		t := map[enums.IndexedValueType]string{enums.INDEXED_VALUE_TYPE_KEYWORD: "Keyword",
			enums.INDEXED_VALUE_TYPE_KEYWORD_LIST: "KeywordList", enums.INDEXED_VALUE_TYPE_INT: "Int",
			enums.INDEXED_VALUE_TYPE_DATETIME: "Datetime"}[searchAttributeTypes[n]]
		fmt.Fprintf(&b, " --name %s --type %s", n, t)
	}
	return b.String()
}

// RegisterSearchAttributes registers the chat's search attributes (wire.Search*) in
// namespace ns through Temporal's operator service, those it lacks only. The worker
// calls it at start. It fails where the server does not let this client register
// them (Temporal Cloud, a missing permission, another attribute of the same name and
// another type): the error says so and names SearchAttributesCommand.
func RegisterSearchAttributes(ctx context.Context, tc client.Client, ns string) error {
	have, err := tc.OperatorService().ListSearchAttributes(ctx, &operatorservice.ListSearchAttributesRequest{Namespace: ns})
	if err != nil {
		return fmt.Errorf("agentchat: search attributes of namespace %q: %w (register them with: %s)", ns, err, SearchAttributesCommand(ns))
	}
	missing := map[string]enums.IndexedValueType{}
	for n, t := range searchAttributeTypes {
		got, ok := have.GetCustomAttributes()[n]
		switch {
		case !ok:
			missing[n] = t
		case got != t:
			return fmt.Errorf("agentchat: namespace %q has search attribute %s of type %s, where chats need %s", ns, n, got, t)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	if _, err := tc.OperatorService().AddSearchAttributes(ctx, &operatorservice.AddSearchAttributesRequest{
		Namespace: ns, SearchAttributes: missing}); err != nil {
		return fmt.Errorf("agentchat: register search attributes in namespace %q: %w (register them with: %s)", ns, err, SearchAttributesCommand(ns))
	}
	return nil
}

// searchIndexTTL is how long a Client trusts what it found out about the namespace's
// search attributes before it asks again.
const searchIndexTTL = time.Minute

// indexed reports whether the namespace has the chat's search attributes, asking the
// server at most once per searchIndexTTL (an error counts as no).
func (c *Client) indexed(ctx context.Context) bool {
	c.index.Lock()
	defer c.index.Unlock()
	if !c.index.at.IsZero() && time.Since(c.index.at) < searchIndexTTL {
		return c.index.ok
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	have, err := c.tc.OperatorService().ListSearchAttributes(ctx, &operatorservice.ListSearchAttributesRequest{Namespace: c.namespace})
	ok := err == nil
	for n, t := range searchAttributeTypes {
		if got, found := have.GetCustomAttributes()[n]; !found || got != t {
			ok = false
		}
	}
	c.index.ok, c.index.at = ok, time.Now()
	return ok
}

// startAttributes are the search attributes a chat starts with: its status, agents,
// no turns and now, when the namespace has them; none otherwise.
func (c *Client) startAttributes(ctx context.Context, in wire.AgentChatInput) temporal.SearchAttributes {
	if !c.indexed(ctx) {
		return temporal.SearchAttributes{}
	}
	agents := append([]string{}, in.Participants...)
	return temporal.NewSearchAttributes(searchStatus.ValueSet(wire.StatusRunning), searchAgents.ValueSet(agents),
		searchTurns.ValueSet(0), searchLastActivity.ValueSet(time.Now().UTC()))
}
