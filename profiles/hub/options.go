package hub

import (
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/headroom-planner/headroom/planner"
)

// Defaults for Options fields left zero.
const (
	// DefaultEndpoint is the Hugging Face Hub (HF_ENDPOINT overrides it).
	DefaultEndpoint = "https://huggingface.co"
	// DefaultOllamaRegistry is Ollama's public registry
	// (HEADROOM_OLLAMA_REGISTRY overrides it).
	DefaultOllamaRegistry = "https://registry.ollama.ai"
	// DefaultMaxFileBytes bounds the bytes received for one file: the
	// largest GGUF headers (256k-token vocabularies) are about 10 MB.
	DefaultMaxFileBytes = planner.Bytes(48 << 20)
	// DefaultMaxRefBytes bounds the bytes received for one reference, all
	// files together (a 160-shard checkpoint's headers are a few MB).
	DefaultMaxRefBytes = planner.Bytes(160 << 20)
	// DefaultConnectTimeout bounds dialling and the TLS handshake.
	DefaultConnectTimeout = 15 * time.Second
	// DefaultStallTimeout bounds the wait for response headers and any
	// pause inside a body.
	DefaultStallTimeout = 30 * time.Second
)

// Progress reports a read in flight: File is the file or URL being read,
// Read the bytes received so far for it, Total its size (-1 unknown), and
// RefRead the bytes received for the whole reference.
type Progress struct {
	File    string
	Read    int64
	Total   int64
	RefRead int64
}

// Options are everything a resolution depends on besides the reference.
// Nothing here is read from the environment by this package; FromEnv is a
// helper for the application layer that does.
type Options struct {
	// Endpoint is the Hugging Face Hub (or a mirror); "" = DefaultEndpoint.
	Endpoint string
	// Token is a Hugging Face access token. It is sent only to Endpoint's
	// host, never to redirect targets elsewhere, and is never logged,
	// cached or put into an error.
	Token string
	// OllamaRegistry is the Ollama registry; "" = DefaultOllamaRegistry.
	OllamaRegistry string
	// Offline answers from the cache only; nothing is requested.
	Offline bool
	// CacheDir holds the metadata cache; "" disables it (DefaultCacheDir
	// gives the usual place).
	CacheDir string
	// Client, when set, is used instead of one built from the timeouts; its
	// CheckRedirect is replaced so that the token never leaves the Hub.
	Client *http.Client
	// ConnectTimeout and StallTimeout: zero = the defaults above.
	ConnectTimeout time.Duration
	StallTimeout   time.Duration
	// MaxFileBytes and MaxRefBytes cap the bytes received; zero = defaults.
	MaxFileBytes planner.Bytes
	MaxRefBytes  planner.Bytes
	// OnProgress, when set, is called as bytes arrive: from the goroutines
	// reading headers (up to 6 at once), one call at a time; keep it quick
	// and hand UI work to the UI thread.
	OnProgress func(Progress)
}

// withDefaults fills zero fields and checks the endpoints.
func (o Options) withDefaults() (Options, error) {
	if o.Endpoint == "" {
		o.Endpoint = DefaultEndpoint
	}
	if o.OllamaRegistry == "" {
		o.OllamaRegistry = DefaultOllamaRegistry
	}
	o.Endpoint = strings.TrimRight(o.Endpoint, "/")
	o.OllamaRegistry = strings.TrimRight(o.OllamaRegistry, "/")
	for _, e := range []struct{ name, v string }{{"hub endpoint", o.Endpoint}, {"ollama registry", o.OllamaRegistry}} {
		u, err := url.Parse(e.v)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return o, fmt.Errorf("%s %q: want an http(s) URL such as %s", e.name, e.v, DefaultEndpoint)
		}
	}
	if o.ConnectTimeout <= 0 {
		o.ConnectTimeout = DefaultConnectTimeout
	}
	if o.StallTimeout <= 0 {
		o.StallTimeout = DefaultStallTimeout
	}
	if o.MaxFileBytes <= 0 {
		o.MaxFileBytes = DefaultMaxFileBytes
	}
	if o.MaxRefBytes <= 0 {
		o.MaxRefBytes = DefaultMaxRefBytes
	}
	return o, nil
}

// DefaultCacheDir is os.UserCacheDir()/headroom/hub.
func DefaultCacheDir() (string, error) {
	d, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("find the user cache directory: %w", err)
	}
	return filepath.Join(d, "headroom", "hub"), nil
}

// FromEnv builds Options from environment variables read through getenv
// (os.Getenv in the application layer; a map in tests):
//
//	HF_ENDPOINT               Endpoint
//	HF_TOKEN                  Token (else HUGGING_FACE_HUB_TOKEN, else
//	                          the CLI token file, see FindToken)
//	HF_HUB_OFFLINE=1          Offline (also "true", "yes", "on")
//	HEADROOM_OLLAMA_REGISTRY  OllamaRegistry
//	HEADROOM_HUB_CACHE        CacheDir (else DefaultCacheDir)
//
// A token file that cannot be read is ignored: anonymous access still
// works for public repositories.
func FromEnv(getenv func(string) string) Options {
	o := Options{
		Endpoint:       getenv("HF_ENDPOINT"),
		OllamaRegistry: getenv("HEADROOM_OLLAMA_REGISTRY"),
		Offline:        truthy(getenv("HF_HUB_OFFLINE")),
		CacheDir:       getenv("HEADROOM_HUB_CACHE"),
	}
	o.Token, _ = FindToken(getenv)
	if o.CacheDir == "" {
		o.CacheDir, _ = DefaultCacheDir()
	}
	return o
}

// truthy reads a boolean environment value as huggingface_hub does.
func truthy(v string) bool {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "1", "true", "yes", "on":
		return true
	}
	return false
}

// FindToken returns the Hugging Face token: HF_TOKEN, else
// HUGGING_FACE_HUB_TOKEN, else the file the Hugging Face CLI writes on
// login: HF_TOKEN_PATH, else $HF_HOME/token, else
// $XDG_CACHE_HOME/huggingface/token, else ~/.cache/huggingface/token
// (huggingface_hub constants.py). "" with a nil error means none is set.
func FindToken(getenv func(string) string) (string, error) {
	for _, k := range []string{"HF_TOKEN", "HUGGING_FACE_HUB_TOKEN"} {
		if t := strings.TrimSpace(getenv(k)); t != "" {
			return t, nil
		}
	}
	path := TokenPath(getenv)
	if path == "" {
		return "", nil
	}
	data, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("read the Hugging Face token file %s: %w", path, err)
	}
	if len(data) > 4096 {
		return "", fmt.Errorf("the Hugging Face token file %s is %d bytes: not a token", path, len(data))
	}
	return strings.TrimSpace(string(data)), nil
}

// TokenPath is where the Hugging Face CLI keeps its token (see FindToken);
// "" when no home directory is known.
func TokenPath(getenv func(string) string) string {
	if p := getenv("HF_TOKEN_PATH"); p != "" {
		return p
	}
	if h := getenv("HF_HOME"); h != "" {
		return filepath.Join(h, "token")
	}
	if x := getenv("XDG_CACHE_HOME"); x != "" {
		return filepath.Join(x, "huggingface", "token")
	}
	home := getenv("HOME")
	if home == "" {
		home = getenv("USERPROFILE")
	}
	if home == "" {
		return ""
	}
	return filepath.Join(home, ".cache", "huggingface", "token")
}
