package agents

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	"github.com/agentchat/agentchat/wire"
)

// Registry holds the worker's agent definitions by id. It is read-only after
// NewRegistry and safe for concurrent use.
type Registry struct {
	cfg  Config
	byID map[string]Definition
}

// NewRegistry indexes a parsed Config.
func NewRegistry(cfg Config) *Registry {
	r := &Registry{cfg: cfg, byID: make(map[string]Definition, len(cfg.Agents))}
	for _, d := range cfg.Agents {
		r.byID[d.ID] = d
	}
	return r
}

// Config returns the config the registry was built from.
func (r *Registry) Config() Config { return r.cfg }

// Get returns the definition of an agent id.
func (r *Registry) Get(id string) (Definition, bool) {
	d, ok := r.byID[id]
	return d, ok
}

// Endpoint returns the endpoint an agent uses.
func (r *Registry) Endpoint(d Definition) Endpoint { return r.cfg.Endpoints[d.Endpoint] }

// IDs returns every agent id, sorted.
func (r *Registry) IDs() []string {
	ids := make([]string, 0, len(r.byID))
	for id := range r.byID {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// UnknownAgentsError is returned by Resolve when ids are not in the registry.
type UnknownAgentsError struct {
	Unknown []string // the ids not found, in the order given
	Known   []string // every id the registry has, sorted
}

func (e *UnknownAgentsError) Error() string {
	return fmt.Sprintf("unknown agent id(s) %s; this worker knows %s",
		wire.QuotedList(e.Unknown), wire.QuotedList(e.Known))
}

// Resolve returns the participants for agent ids, in order. Ids not in the registry
// give an *UnknownAgentsError naming all of them; an empty list or a repeated id is an
// error too.
func (r *Registry) Resolve(ids []string) ([]wire.Participant, error) {
	if len(ids) == 0 {
		return nil, fmt.Errorf("a chat needs at least one participant")
	}
	var unknown []string
	seen := map[string]bool{}
	out := make([]wire.Participant, 0, len(ids))
	for _, id := range ids {
		if seen[id] {
			return nil, fmt.Errorf("agent id %q is named twice", id)
		}
		seen[id] = true
		d, ok := r.byID[id]
		if !ok {
			unknown = append(unknown, id)
			continue
		}
		p, err := d.Participant(r.Endpoint(d))
		if err != nil {
			return nil, err
		}
		for _, name := range d.GoTools() { // MCP tools are the worker's to add (activities)
			p.Tools = append(p.Tools, wire.ToolSpec{Name: name, Tool: r.cfg.Tools[name].WithDefaults()})
		}
		out = append(out, p)
	}
	if len(unknown) > 0 {
		return nil, &UnknownAgentsError{Unknown: unknown, Known: r.IDs()}
	}
	return out, nil
}

// Participant returns d as a chat participant on endpoint e. A kind that is not one of
// Kinds is an error naming the agent, the kind and the known kinds.
func (d Definition) Participant(e Endpoint) (wire.Participant, error) {
	ch, err := d.Kind.Channel()
	if err != nil {
		return wire.Participant{}, fmt.Errorf("agent %q: %w", d.ID, err)
	}
	ch.Reducer, ch.Agent = d.Reducer.Key(), d.ID
	return wire.Participant{
		ID: d.ID, Name: d.Name, Kind: d.Kind,
		ChannelType: ch.Type, ChannelKey: ch.Key(e.BaseURL),
		Call: d.Call.WithDefaults(), Reducer: d.Reducer,
		MaxToolRounds: cmp.Or(d.MaxToolRounds, wire.DefaultMaxToolRounds),
	}, nil
}

// PublishInterval returns how often agent d's text deltas are published: its own
// PublishInterval, else its endpoint's, else DefaultPublishInterval; negative: never.
func (r *Registry) PublishInterval(d Definition) time.Duration {
	if d.PublishInterval != 0 {
		return time.Duration(d.PublishInterval)
	}
	if e := r.Endpoint(d); e.PublishInterval != 0 {
		return time.Duration(e.PublishInterval)
	}
	return DefaultPublishInterval
}
