package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/agentchat/agentchat/codec"
	"github.com/agentchat/agentchat/keyring"
)

// codecServerCmd serves Temporal's remote codec protocol for the key ring.
func codecServerCmd(g *globals, s Streams) *cobra.Command {
	var listen, issuer, audience string
	var origins []string
	cmd := &cobra.Command{
		Use:   "codec-server",
		Short: "Serve Temporal's remote codec protocol, so the UI and the temporal CLI show encrypted chats in plain text",
		Long: `Serve POST /encode and /decode (Temporal's remote codec protocol, also under a
/{namespace}/ prefix; the X-Namespace header is accepted) with the key ring of --keys
or $AGENTCHAT_KEYS, the same ring the worker has, until interrupted.

Every request must carry Authorization: Bearer <token>, the token from
$AGENTCHAT_CODEC_TOKEN (choose a long random one: openssl rand -hex 32), or, with
--oidc-issuer, a JWT that issuer signed for --oidc-audience; others get 401. Bodies
hold up to 4 MiB (413 over); another path gets 404, another method 405.

The Temporal UI calls it from the browser: allow the UI's origin with --origin, and
set the UI's codec endpoint (its settings, or TEMPORAL_CODEC_ENDPOINT for the UI
server; TEMPORAL_CODEC_PASS_ACCESS_TOKEN=true sends the signed-in user's OIDC token,
which --oidc-issuer checks). It serves plain HTTP: beyond localhost, put it behind
TLS (a reverse proxy), as the token and the decoded text cross the network.`,
		Example: `  AGENTCHAT_KEYS=keys.json AGENTCHAT_CODEC_TOKEN=s3cret go run ./starter codec-server --listen 127.0.0.1:8081 --origin http://localhost:8233
  temporal workflow show -w support-42 --codec-endpoint http://127.0.0.1:8081 --codec-auth "Bearer s3cret"`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ring, err := keyring.FromEnv(g.dial.KeysPath)
			if err != nil {
				return err
			}
			verify, err := oidcVerifier(cmd.Context(), issuer, audience)
			if err != nil {
				return err
			}
			logger := slog.New(slog.NewTextHandler(s.Err, nil))
			h, err := codec.NewHandler(ring, codec.HandlerOptions{Token: os.Getenv(codec.TokenEnv), Origins: origins, Verify: verify, Log: logger})
			if err != nil {
				return err
			}
			ln, err := net.Listen("tcp", listen)
			if err != nil {
				return fmt.Errorf("codec server: %w", err)
			}
			srv := codec.NewServer(h, logger)
			fmt.Fprintf(s.Out, "codec server at http://%s (keys %v, current %s); stop with Ctrl-C\n", ln.Addr(), ring.IDs(), ring.Current())
			done := make(chan error, 1)
			go func() { done <- srv.Serve(ln) }()
			select {
			case <-cmd.Context().Done():
				_ = srv.Close()
				return nil
			case err := <-done:
				if errors.Is(err, http.ErrServerClosed) {
					return nil
				}
				return err
			}
		},
	}
	cmd.Flags().StringVar(&listen, "listen", "127.0.0.1:8081", "host:port to serve on")
	cmd.Flags().StringVar(&issuer, "oidc-issuer", "", "also accept OIDC JWTs (ID or access tokens) signed by this issuer (its discovery URL's base), e.g. what the Temporal UI passes with TEMPORAL_CODEC_PASS_ACCESS_TOKEN")
	cmd.Flags().StringVar(&audience, "oidc-audience", "", "the audience (client id) an OIDC token must name; required with --oidc-issuer")
	cmd.Flags().StringArrayVar(&origins, "origin", nil, "browser origin allowed by CORS, e.g. the Temporal UI's http://localhost:8080 (repeatable; * for any)")
	return cmd
}

// reencryptCmd sends the Reencrypt signal.
func reencryptCmd(g *globals, s Streams) *cobra.Command {
	var chatID string
	cmd := &cobra.Command{
		Use:   "reencrypt",
		Short: "Make a chat carry its state into a new run, encoded with the current key",
		Long: `Signal the chat (Reencrypt) to continue as new at its next turn boundary: its next
run's input, everything the chat carries, is encoded by the worker with the key
ring's current key. Run it for every chat after a rotation (a new "current").`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := g.connect(cmd.Context())
			if err != nil {
				return err
			}
			defer c.Close()
			if err := c.Reencrypt(cmd.Context(), chatID); err != nil {
				return err
			}
			fmt.Fprintf(s.Out, "chat %s continues as new at its next turn boundary, encoded with the worker's current key\n", chatID)
			return nil
		},
	}
	chatFlag(cmd, &chatID)
	return cmd
}

// keysCmd writes a new key ring, or adds a key to one.
func keysCmd(s Streams) *cobra.Command {
	var id, add, out string
	var force bool
	cmd := &cobra.Command{
		Use:   "keys",
		Short: "Print a new key ring (one fresh AES-256 key), or one with a new current key added",
		Long: `Print a key ring file to standard output (or write it to --out, mode 0600):
{"current": ID, "keys": {ID: base64}}, one fresh random 32-byte key for AES-256-GCM,
or, with --add, the keys of an existing ring plus a new one that becomes current. The
file is a secret: chmod 600, never commit it. To rotate in place, use --add FILE
--out FILE: a shell's "> FILE" empties FILE before keys reads it. --out refuses to
replace an existing file other than the --add file (its keys may be the only ones that
decrypt your chats) unless --force is given.

Turn encryption on by naming the file in $` + keyring.Env + ` (or --keys) for every worker,
client and codec server of the chats. After a rotation (--add), restart them with the
new ring and run "starter reencrypt --chat ID" so a chat carries its state under the new
key; keep the old keys while anything sealed with them is still read.

Signing keys are separate files (AGENTCHAT_SIGNING_KEY, AGENTCHAT_VERIFY_KEYS; README,
"Encryption at rest").`,
		Example: `  go run ./starter keys --id k1 --out keys.json
  go run ./starter keys --id k2 --add keys.json --out keys.json   # rotation: k2 encrypts, k1 still decrypts`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			f, err := keyring.Generate(id)
			if err != nil {
				return err
			}
			if _, err := keyring.New(f); err != nil {
				return err
			}
			if err := refuseReplacingRing(out, add, force); err != nil {
				return err
			}
			if add != "" {
				old, err := readRingFile(add)
				if err != nil {
					return err
				}
				if _, dup := old.Keys[id]; dup {
					return fmt.Errorf("keys: %s already holds a key %q; choose another --id", add, id)
				}
				old.Keys[id], old.Current = f.Keys[id], id
				f = old
			}
			b, err := json.MarshalIndent(f, "", "  ")
			if err != nil {
				return err
			}
			b = append(b, '\n')
			if out == "" {
				_, err = s.Out.Write(b)
				return err
			}
			if err := writeSecretFile(out, b); err != nil {
				return fmt.Errorf("keys: %w", err)
			}
			fmt.Fprintf(s.Out, "wrote key ring %s (current %s, keys %s)\n", out, f.Current, strings.Join(slices.Sorted(maps.Keys(f.Keys)), ", "))
			return nil
		},
	}
	cmd.Flags().StringVar(&id, "id", "k1", "id of the new key, which becomes current")
	cmd.Flags().StringVar(&add, "add", "", "key ring file to add the new key to (its keys keep decrypting)")
	cmd.Flags().StringVar(&out, "out", "", "file to write the ring to, mode 0600 (may be the --add file; another existing file needs --force); default standard output")
	cmd.Flags().BoolVar(&force, "force", false, "let --out replace an existing key ring that is not the --add file (its keys are lost)")
	return cmd
}

// refuseReplacingRing refuses --out naming an existing file that is not the --add file
// (the same file by os.SameFile, however named), unless force: that file's keys may be
// the only ones that decrypt a chat, and keys would replace them with a fresh ring.
func refuseReplacingRing(out, add string, force bool) error {
	if out == "" || force {
		return nil
	}
	fi, err := os.Stat(out)
	if err != nil {
		return nil // missing (or unreadable: writing it reports that)
	}
	if add != "" {
		if ai, err := os.Stat(add); err == nil && os.SameFile(fi, ai) {
			return nil
		}
	}
	return fmt.Errorf("keys: %s already exists, and its keys may be the only ones that decrypt your chats; "+
		"to add a key to it, run keys --id NEW --add %s --out %s; to replace it and lose its keys, add --force", out, out, out)
}

func readRingFile(path string) (keyring.File, error) {
	if fi, err := os.Stat(path); err == nil && fi.Size() == 0 {
		return keyring.File{}, fmt.Errorf("keys: %s is empty: if it was the target of a shell's \"> %s\", its keys are gone; "+
			"restore it from a backup, and rotate in place with --add %s --out %s", path, path, path, path)
	}
	if _, err := keyring.Load(path); err != nil {
		return keyring.File{}, err
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return keyring.File{}, err
	}
	var f keyring.File
	return f, json.Unmarshal(data, &f)
}

// writeSecretFile writes b to path, mode 0600, through a temporary file in the same
// folder renamed over it: path is replaced only by a whole file.
func writeSecretFile(path string, b []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".keys-*")
	if err != nil {
		return err
	}
	_, werr := tmp.Write(b)
	serr := tmp.Sync()
	cerr := tmp.Close()
	if err := errors.Join(werr, serr, cerr); err != nil {
		_ = os.Remove(tmp.Name())
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		_ = os.Remove(tmp.Name())
		return err
	}
	return nil
}
