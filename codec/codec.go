package codec

import (
	"fmt"
	"log/slog"

	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"
	"google.golang.org/protobuf/proto"

	"github.com/agentchat/agentchat/keyring"
)

// Metadata keys and values of an encrypted payload (samples-go encryption/).
const (
	MetadataEncoding  = converter.MetadataEncoding // "encoding"
	EncodingEncrypted = "binary/encrypted"
	MetadataKeyID     = "encryption-key-id"
)

// ErrTypeKey is the Temporal application error type of Decode's error for a payload
// the ring cannot open. It crosses the wire in a failure's type, which stays readable
// where the failure's message does not: a client learns from it that the worker could
// not open what the client sealed.
const ErrTypeKey = "EncryptionKey"

// KeyError is the cause of Decode's error for payload Index, sealed with key KeyID,
// that the ring cannot open: Err is a *keyring.UnknownKeyError (the ring lacks the
// key id) or wraps keyring.ErrNotAuthentic (the ring's key of that id is another, or
// the bytes were altered). Decode returns it inside a *temporal.ApplicationError of
// type ErrTypeKey (retryable: another worker may hold the key).
type KeyError struct {
	Index int
	KeyID string
	Err   error
}

func (e *KeyError) Error() string {
	return fmt.Sprintf("codec: decode payload %d (key id %q): %v", e.Index, e.KeyID, e.Err)
}

func (e *KeyError) Unwrap() error { return e.Err }

// Codec seals and opens payloads with a key ring; it implements converter.PayloadCodec.
type Codec struct {
	Ring *keyring.Ring
	// Logger, when set, receives a warning for each payload Decode cannot open, naming
	// its key id: a worker logs what it could not open, as the client that sent it
	// learns of it only from a failure.
	Logger *slog.Logger
}

// Encode seals each payload whole (metadata and data) with the ring's current key.
func (c Codec) Encode(payloads []*commonpb.Payload) ([]*commonpb.Payload, error) {
	out := make([]*commonpb.Payload, len(payloads))
	for i, p := range payloads {
		plain, err := proto.Marshal(p)
		if err != nil {
			return nil, fmt.Errorf("codec: encode payload %d: %w", i, err)
		}
		id, sealed, err := c.Ring.Seal(plain, nil)
		if err != nil {
			return nil, fmt.Errorf("codec: encode payload %d: %w", i, err)
		}
		out[i] = &commonpb.Payload{Metadata: map[string][]byte{
			MetadataEncoding: []byte(EncodingEncrypted),
			MetadataKeyID:    []byte(id),
		}, Data: sealed}
	}
	return out, nil
}

// Decode opens each encrypted payload, with the key its metadata names; others pass
// unchanged. Errors name the payload's index and the key id: one the ring cannot open
// is a *temporal.ApplicationError of type ErrTypeKey whose cause is a *KeyError
// (keyring.UnknownKeyError, keyring.ErrNotAuthentic are wrapped).
func (c Codec) Decode(payloads []*commonpb.Payload) ([]*commonpb.Payload, error) {
	out := make([]*commonpb.Payload, len(payloads))
	for i, p := range payloads {
		if string(p.GetMetadata()[MetadataEncoding]) != EncodingEncrypted {
			out[i] = p
			continue
		}
		id, ok := p.GetMetadata()[MetadataKeyID]
		if !ok {
			return nil, fmt.Errorf("codec: decode payload %d: encrypted without the %s metadata", i, MetadataKeyID)
		}
		plain, err := c.Ring.Open(string(id), p.GetData(), nil)
		if err != nil {
			ke := &KeyError{Index: i, KeyID: string(id), Err: err}
			if c.Logger != nil {
				c.Logger.Warn("a payload does not open with this key ring: the ring of its sender differs (give every client and worker the same ring)",
					"keyId", ke.KeyID, "ring", c.Ring.IDs(), "error", err)
			}
			return nil, temporal.NewApplicationErrorWithCause(fmt.Sprintf("payload sealed with key id %q", ke.KeyID), ErrTypeKey, ke)
		}
		var inner commonpb.Payload
		if err := proto.Unmarshal(plain, &inner); err != nil {
			return nil, fmt.Errorf("codec: decode payload %d (key %q): not a payload: %w", i, id, err)
		}
		out[i] = &inner
	}
	return out, nil
}

// DataConverter is Temporal's default data converter with Codec applied to every
// payload; ring nil gives the default converter.
func DataConverter(ring *keyring.Ring) converter.DataConverter {
	return loggingConverter(ring, nil)
}

func loggingConverter(ring *keyring.Ring, logger *slog.Logger) converter.DataConverter {
	if ring == nil {
		return converter.GetDefaultDataConverter()
	}
	return converter.NewCodecDataConverter(converter.GetDefaultDataConverter(), Codec{Ring: ring, Logger: logger})
}

// FailureConverter moves a failure's message and stack trace into its encoded
// attributes (sealed by dc), so no failure in the history carries chat text. A
// failure whose encoded attributes dc cannot open (sealed with a key the ring lacks,
// or another key under the same id) becomes an *UnreadableFailureError that says so
// and names the key id, where Temporal's converter leaves only "Encoded failure".
func FailureConverter(dc converter.DataConverter) converter.FailureConverter {
	return failureConverter{FailureConverter: temporal.NewDefaultFailureConverter(temporal.DefaultFailureConverterOptions{
		DataConverter: dc, EncodeCommonAttributes: true}), dc: dc}
}

// Apply sets co's data and failure converters for ring; ring nil leaves co as it is.
// Unless co already chooses a gRPC compression, it also turns the SDK's default gzip
// of requests off: every payload is then ciphertext, which does not compress, and
// gzip of a 10,000-message transfer cost about a tenth of its time (README,
// "Performance").
func Apply(co *client.Options, ring *keyring.Ring) {
	ApplyLogged(co, ring, nil)
}

// ApplyLogged is Apply with a logger that receives a warning for each payload the
// ring cannot open (Codec.Logger): workers use it.
func ApplyLogged(co *client.Options, ring *keyring.Ring, logger *slog.Logger) {
	if ring == nil {
		return
	}
	co.DataConverter = loggingConverter(ring, logger)
	co.FailureConverter = FailureConverter(co.DataConverter)
	if co.ConnectionOptions.GrpcCompression == nil {
		co.ConnectionOptions.GrpcCompression = &client.GrpcCompressionNone{}
	}
}
