package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/headroom-planner/headroom/app"
	"github.com/headroom-planner/headroom/profiles/hub"
	"github.com/headroom-planner/headroom/server"
)

// serveOptions are the flags of `headroom serve`.
type serveOptions struct {
	addr, token                  string
	allowModelFiles, allowRemote bool
	maxPlans                     int
	timeout                      time.Duration
	exitAfter                    time.Duration
	quiet                        bool
}

func newServeCmd(g *globalOptions) *cobra.Command {
	o := &serveOptions{}
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve the planner in a browser, as a JSON REST API (/api/) and as MCP tools (/mcp)",
		Long: `serve answers fit, plan, compare, flags, list, validate and probe over HTTP,
with the same JSON as --json, an OpenAPI document at /api/openapi.json, MCP tools
at /mcp, and the web page at /.

It listens on 127.0.0.1 unless told otherwise; any other address needs --token
(or HEADROOM_TOKEN), sent by clients as "Authorization: Bearer TOKEN". Models are
catalog ids: no request makes the server read a file unless --allow-model-files,
or reach the Hugging Face Hub or the Ollama registry unless --allow-remote-models.`,
		Example: "  headroom serve\n  HEADROOM_TOKEN=s3cret headroom serve --addr 0.0.0.0:8080",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runServe(cmd, g, o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.addr, "addr", "127.0.0.1:8080", "host:port to listen on (non-loopback needs --token)")
	f.StringVar(&o.token, "token", "", "bearer token clients must send (default $HEADROOM_TOKEN)")
	f.BoolVar(&o.allowModelFiles, "allow-model-files", false, "let requests name model files on this machine (GGUF, config.json) instead of catalog ids only")
	f.BoolVar(&o.allowRemote, "allow-remote-models", false, "let requests name models on the Hugging Face Hub or the Ollama registry (read with HF_ENDPOINT, HF_TOKEN, HEADROOM_OLLAMA_REGISTRY; headers only)")
	f.IntVar(&o.maxPlans, "max-plans", 0, "answers computed at once (default: CPU count); more wait, up to 256, then get 503")
	f.DurationVar(&o.timeout, "timeout", 60*time.Second, "time limit of one request")
	f.DurationVar(&o.exitAfter, "exit-after", 0, "stop by itself after this long (0 = at SIGINT/SIGTERM only), e.g. for CI")
	f.BoolVar(&o.quiet, "quiet", false, "do not log requests")
	return cmd
}

// runServe opens the application layer and serves until a signal (or
// --exit-after).
func runServe(cmd *cobra.Command, g *globalOptions, o *serveOptions) error {
	token := o.token
	if token == "" {
		token = os.Getenv("HEADROOM_TOKEN")
	}
	if err := server.CheckAddr(o.addr, token); err != nil {
		return err
	}
	if o.maxPlans < 0 || o.timeout <= 0 || o.exitAfter < 0 {
		return app.Usagef("--max-plans, --timeout and --exit-after must be positive")
	}
	h := hub.FromEnv(os.Getenv)
	h.Offline = h.Offline || g.offline
	a, err := app.Open(app.Options{ProfilesDir: g.profilesDir, CalibrationDir: g.calibrationDir, Remote: o.allowRemote, Hub: h,
		Warn: func(msg string) { fmt.Fprintf(cmd.ErrOrStderr(), "headroom: warning: %s\n", msg) }})
	if err != nil {
		return err
	}
	logger := slog.New(slog.NewTextHandler(cmd.ErrOrStderr(), nil))
	if o.quiet {
		logger = slog.New(slog.DiscardHandler)
	}
	srv, err := server.New(a, server.Config{Addr: o.addr, Token: token, MaxPlans: o.maxPlans, Timeout: o.timeout,
		AllowModelFiles: o.allowModelFiles, AllowRemoteModels: o.allowRemote, Logger: logger})
	if err != nil {
		return err
	}
	ln, err := srv.Listen()
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if o.exitAfter > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, o.exitAfter)
		defer cancel()
	}
	fmt.Fprintf(cmd.ErrOrStderr(), "headroom: serving on http://%s/ (API /api/, MCP /mcp)\n", ln.Addr())
	return srv.Serve(ctx, ln)
}
