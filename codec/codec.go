package codec

import (
	"fmt"

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

// Codec seals and opens payloads with a key ring; it implements converter.PayloadCodec.
type Codec struct {
	Ring *keyring.Ring
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
// unchanged. Errors name the payload's index and the key id (keyring.UnknownKeyError,
// keyring.ErrNotAuthentic are wrapped).
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
			return nil, fmt.Errorf("codec: decode payload %d: %w", i, err)
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
	if ring == nil {
		return converter.GetDefaultDataConverter()
	}
	return converter.NewCodecDataConverter(converter.GetDefaultDataConverter(), Codec{Ring: ring})
}

// FailureConverter moves a failure's message and stack trace into its encoded
// attributes (sealed by dc), so no failure in the history carries chat text.
func FailureConverter(dc converter.DataConverter) converter.FailureConverter {
	return temporal.NewDefaultFailureConverter(temporal.DefaultFailureConverterOptions{
		DataConverter: dc, EncodeCommonAttributes: true})
}

// Apply sets co's data and failure converters for ring; ring nil leaves co as it is.
// Unless co already chooses a gRPC compression, it also turns the SDK's default gzip
// of requests off: every payload is then ciphertext, which does not compress, and
// gzip of a 10,000-message transfer cost about a tenth of its time (README,
// "Performance").
func Apply(co *client.Options, ring *keyring.Ring) {
	if ring == nil {
		return
	}
	co.DataConverter = DataConverter(ring)
	co.FailureConverter = FailureConverter(co.DataConverter)
	if co.ConnectionOptions.GrpcCompression == nil {
		co.ConnectionOptions.GrpcCompression = &client.GrpcCompressionNone{}
	}
}
