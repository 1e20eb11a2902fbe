package hub_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/headroom-planner/headroom/profiles/hub"
)

func TestFindArtifact(t *testing.T) {
	s, _ := fakeHub(t)
	cases := []struct {
		name, base, quant string
		want              hub.Artifact
		wantErr           string
	}{
		{"awq from the model's own org", "Qwen/Qwen2.5-72B-Instruct", "awq-int4",
			hub.Artifact{Repo: "Qwen/Qwen2.5-72B-Instruct-AWQ", Quant: "awq-int4", Launch: "Qwen/Qwen2.5-72B-Instruct-AWQ"}, ""},
		{"gguf from a quantizer, not the fine-tune", "Qwen/Qwen3-32B", "q4_k_m",
			hub.Artifact{Repo: "unsloth/Qwen3-32B-GGUF", Files: []string{"Qwen3-32B-Q4_K_M.gguf"}, Quant: "q4_k_m", Launch: "unsloth/Qwen3-32B-GGUF:Q4_K_M"}, ""},
		{"unsloth dynamic quant", "Qwen/Qwen3-32B", "q4_k_xl",
			hub.Artifact{Repo: "unsloth/Qwen3-32B-GGUF", Files: []string{"Qwen3-32B-UD-Q4_K_XL.gguf"}, Quant: "q4_k_xl", Launch: "unsloth/Qwen3-32B-GGUF:UD-Q4_K_XL"}, ""},
		{"split gguf", "Qwen/Qwen3-32B", "q8_0",
			hub.Artifact{Repo: "unsloth/Qwen3-32B-GGUF", Files: []string{"Q8_0/Qwen3-32B-Q8_0-00001-of-00002.gguf", "Q8_0/Qwen3-32B-Q8_0-00002-of-00002.gguf"},
				Quant: "q8_0", Launch: "unsloth/Qwen3-32B-GGUF:Q8_0"}, ""},
		{"native format is the base checkpoint", "Qwen/Qwen3-32B", "bf16",
			hub.Artifact{Repo: "Qwen/Qwen3-32B", Quant: "bf16", Launch: "Qwen/Qwen3-32B"}, ""},
		{"nothing published", "Qwen/Qwen3-32B", "fp8", hub.Artifact{}, "FP8 checkpoint of Qwen3-32B"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := hub.FindArtifact(context.Background(), c.base, c.quant, options(t, s))
			if c.wantErr != "" {
				var nf *hub.NotFoundError
				if !errors.As(err, &nf) || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("FindArtifact = %+v, %v; want a NotFoundError with advice %q", got, err, c.wantErr)
				}
				return
			}
			if err != nil || got.Repo != c.want.Repo || got.Launch != c.want.Launch || strings.Join(got.Files, ",") != strings.Join(c.want.Files, ",") {
				t.Fatalf("FindArtifact = %+v, %v; want %+v", got, err, c.want)
			}
		})
	}
}

func TestFindArtifactOffline(t *testing.T) {
	opt := hub.Options{Endpoint: "http://127.0.0.1:1", Offline: true}
	_, err := hub.FindArtifact(context.Background(), "Qwen/Qwen3-32B", "q4_k_m", opt)
	if !errors.Is(err, hub.ErrOffline) || !strings.Contains(err.Error(), "Qwen3-32B-GGUF") || !strings.Contains(err.Error(), "Q4_K_M") {
		t.Errorf("error %v, want ErrOffline with advice naming a Qwen3-32B-GGUF repository and the Q4_K_M file", err)
	}
}

func TestFindArtifactNeedsNameAndQuant(t *testing.T) {
	for _, c := range [][2]string{{"Qwen/Qwen3-32B", ""}, {"Qwen/", "q4_k_m"}} {
		if _, err := hub.FindArtifact(context.Background(), c[0], c[1], hub.Options{Offline: true}); err == nil || errors.Is(err, hub.ErrOffline) {
			t.Errorf("FindArtifact(%q, %q) = %v, want an argument error", c[0], c[1], err)
		}
	}
}
