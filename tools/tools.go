// Package tools holds the Go functions behind the example agent config's tools, which
// every agentchat worker registers: a clock, a calculator and a small order desk whose
// refund needs a person's approval. They show how a tool is written; register your own
// with activities.Config.Functions.Tools.
package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"sync"
	"time"

	"github.com/agentchat/agentchat/activities"
)

// Builtin returns the built-in tools by name, for activities.Config.Functions.Tools.
func Builtin() map[string]activities.ToolFunc {
	return map[string]activities.ToolFunc{
		"clock":        Clock,
		"calculate":    Calculate,
		"lookup_order": LookupOrder,
		"refund":       Refund,
		"wait":         Wait,
	}
}

// Clock returns the current time in UTC, RFC 3339. Arguments: {} (none).
func Clock(context.Context, json.RawMessage) (string, error) {
	return time.Now().UTC().Format(time.RFC3339), nil
}

// Calculate applies an arithmetic operation. Arguments: {"a": 2, "op": "+", "b": 3}
// with op one of + - * / ^.
func Calculate(_ context.Context, args json.RawMessage) (string, error) {
	var in struct {
		A, B float64
		Op   string
	}
	if err := json.Unmarshal(args, &in); err != nil {
		return "", activities.ToolError("calculate: arguments %s: %v", args, err)
	}
	var r float64
	switch in.Op {
	case "+":
		r = in.A + in.B
	case "-":
		r = in.A - in.B
	case "*":
		r = in.A * in.B
	case "/":
		if in.B == 0 {
			return "", activities.ToolError("calculate: division by zero")
		}
		r = in.A / in.B
	case "^":
		r = math.Pow(in.A, in.B)
	default:
		return "", activities.ToolError("calculate: unknown op %q (+ - * / ^)", in.Op)
	}
	return strconv.FormatFloat(r, 'g', -1, 64), nil
}

// order is one order of the desk.
type order struct {
	Item   string
	Amount float64
	Status string
}

// orders is the order desk's (made-up) data.
var orders = map[string]order{
	"1001": {"tea set", 42.50, "delivered"},
	"1002": {"kettle", 89.00, "in transit"},
	"1003": {"mugs (4)", 24.00, "delivered"},
}

// LookupOrder returns an order's item, amount and status. Arguments: {"order": "1001"}.
func LookupOrder(_ context.Context, args json.RawMessage) (string, error) {
	id, o, err := findOrder(args)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("order %s: %s, $%.2f, %s", id, o.Item, o.Amount, o.Status), nil
}

// Refund refunds an order; the example config makes it need approval. Arguments:
// {"order": "1001"}.
//
// A refund is a side effect, so it deduplicates on the call's idempotency key
// (activities.CallOf): a call retried with the same key answers what the first attempt
// answered and refunds nothing again. The desk's ledger is in memory, so this holds
// within one worker process; a real refund passes the key to its payment service
// (e.g. an Idempotency-Key header), which keeps it durably. Called outside a tool call
// (no key), it refunds every time.
func Refund(ctx context.Context, args json.RawMessage) (string, error) {
	call, keyed := activities.CallOf(ctx)
	if keyed {
		if res, ok := refunds.get(call.IdempotencyKey()); ok {
			return res, nil
		}
	}
	id, o, err := findOrder(args)
	if err != nil {
		return "", err
	}
	res := fmt.Sprintf("refunded $%.2f for order %s", o.Amount, id)
	if keyed {
		refunds.put(call.IdempotencyKey(), res)
	}
	return res, nil
}

// ledger records the refunds made, by idempotency key. It keeps the latest maxLedger.
type ledger struct {
	mu    sync.Mutex
	byKey map[string]string
	order []string
	made  int // refunds made, for tests
}

// maxLedger bounds the refunds the desk remembers: far more than are retried at once.
const maxLedger = 10000

var refunds = &ledger{byKey: map[string]string{}}

func (l *ledger) get(key string) (string, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	res, ok := l.byKey[key]
	return res, ok
}

func (l *ledger) put(key, res string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, ok := l.byKey[key]; ok {
		return
	}
	if len(l.order) == maxLedger {
		delete(l.byKey, l.order[0])
		l.order = l.order[1:]
	}
	l.byKey[key] = res
	l.order = append(l.order, key)
	l.made++
}

// findOrder returns the order the arguments {"order": id} name, with its id. An unknown
// id or unreadable arguments are a ToolError.
func findOrder(args json.RawMessage) (string, order, error) {
	id, err := orderID(args)
	if err != nil {
		return "", order{}, err
	}
	o, ok := orders[id]
	if !ok {
		return "", order{}, activities.ToolError("no order %q", id)
	}
	return id, o, nil
}

// orderID reads the order id of the arguments {"order": id}, a string or a number.
func orderID(args json.RawMessage) (string, error) {
	var in struct {
		Order json.RawMessage `json:"order"`
	}
	if err := json.Unmarshal(args, &in); err != nil || len(in.Order) == 0 {
		return "", activities.ToolError("arguments %s: want {\"order\": \"1001\"}", args)
	}
	var s string
	if json.Unmarshal(in.Order, &s) == nil {
		return s, nil
	}
	return string(in.Order), nil // a number
}
